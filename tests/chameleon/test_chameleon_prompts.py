"""Golden prompts: every Chameleon prompt rendered for a fixture example, diffed.

The files are in ``tests/chameleon/golden/``. Regenerate them after an intended prompt
change with
``TABLEREASON_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/chameleon/test_chameleon_prompts.py``
and review the diff.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import golden

from tablereason.datasets.example import Example
from tablereason.llm import Request, ScriptedLLM
from tablereason.methods.chameleon import ChainOfThought, Chameleon, ProgramOfThought
from tablereason.prompts.render import template, template_names
from tablereason.sandbox import PythonSandbox

GOLDEN = Path(__file__).parent / "golden"
ALL_TABMWP = ("['row_lookup', 'column_lookup', 'table_verbalizer', 'knowledge_retrieval', "
              "'program_generator', 'program_verifier', 'program_executor', "
              "'solution_generator', 'answer_generator']")  # fmt: skip
ALL_SCIENCEQA = ("['query_generator', 'search', 'image_captioner', 'text_detector', "
                 "'knowledge_retrieval', 'solution_generator', 'answer_generator']")  # fmt: skip
REPLIES = {
    "planner": "", "row_lookup": "1, 2", "column_lookup": "all",
    "table_verbalizer": "Eight rows.", "knowledge_retrieval": "- Facts.",
    "program_generator": "ans = 4", "solution_generator": "The answer is A.",
    "query_generator": "jupiter", "program_generator_and_verifier": "ans = 'A'",
}  # fmt: skip


def collect(box: PythonSandbox, tabmwp: Example, scienceqa: Example) -> dict[str, str]:
    prompts: dict[str, str] = {}

    def reply(plan: str) -> ScriptedLLM:
        def answer(request: Request) -> str:
            site = request.call_site.removeprefix("chameleon/")
            assert request.prompt is not None
            prompts.setdefault(f"{kind}__{site}", request.prompt)
            return plan if site == "planner" else REPLIES[site]

        return ScriptedLLM(fn=answer)

    kind = "tabmwp"
    Chameleon(reply(ALL_TABMWP), "tabmwp", sandbox=box, rl_cell_threshold=0,
              cl_cell_threshold=0).run(tabmwp)  # fmt: skip
    kind = "scienceqa"
    Chameleon(reply(ALL_SCIENCEQA), "scienceqa").run(scienceqa)
    kind = "scienceqa_cot"
    ChainOfThought(reply(""), "scienceqa").run(scienceqa)
    kind = "scienceqa_pot"
    ProgramOfThought(reply(""), "scienceqa", sandbox=box).run(scienceqa)
    return prompts


def test_golden_prompts(box: PythonSandbox, tabmwp_examples: dict[str, Example],
                        scienceqa_examples: dict[str, Example]) -> None:  # fmt: skip
    prompts = collect(box, tabmwp_examples["16"], scienceqa_examples["23"])
    golden.check_folder(GOLDEN, {f"{name}.txt": text for name, text in prompts.items()})


def test_every_template_is_used(box: PythonSandbox, tabmwp_examples: dict[str, Example],
                                scienceqa_examples: dict[str, Example]) -> None:  # fmt: skip
    prompts = collect(box, tabmwp_examples["1597"], scienceqa_examples["23"])
    others = collect(box, tabmwp_examples["16"], scienceqa_examples["93"])
    text = "\n".join([*prompts.values(), *others.values()])
    assert "tabmwp__column_lookup" in prompts
    for name in template_names("chameleon"):
        literal = max(re.split(r"\{\{.*?\}\}", template(name)), key=len).strip()
        assert literal and literal in text, f"template {name} never reaches a prompt"


@pytest.mark.parametrize("name", template_names("chameleon"))
def test_templates_end_without_trailing_space(name: str) -> None:
    assert not template(name).endswith((" ", "\n"))
