from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))

from cli_helpers import EXAMPLE, QUESTION
from scripted_server import taymyr_reply

from tablereason.api import ask
from tablereason.llm import ScriptedLLM
from tablereason.trace import Prediction


@pytest.fixture(scope="module")
def taymyr_prediction() -> Prediction:
    """A real Chain-of-Table run (scripted replies): select row 4, then two columns."""
    llm = ScriptedLLM(fn=lambda request: taymyr_reply(request.as_text()))
    return ask(EXAMPLE, QUESTION, llm=llm, caption="Taymyr Autonomous Okrug")
