"""Shared constants of the command-line tests: the example table and its question."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "taymyr_births.csv"
QUESTION = "what year was the first to reach 1,000 or more live births?"
