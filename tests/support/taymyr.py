"""The example table the command-line and trace tests ask about, and its question.

``examples/taymyr_births.csv`` is the Taymyr Autonomous Okrug births table;
:func:`support.scripted_server.taymyr_reply` scripts the replies that answer
:data:`QUESTION` about it.
"""

from __future__ import annotations

from pathlib import Path

#: The checkout's root folder.
REPO = Path(__file__).resolve().parents[2]
#: The example CSV file.
EXAMPLE = REPO / "examples" / "taymyr_births.csv"
#: The question whose scripted answer is 1985.
QUESTION = "what year was the first to reach 1,000 or more live births?"
