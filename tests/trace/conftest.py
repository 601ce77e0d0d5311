from __future__ import annotations

import pytest
from support.scripted_server import taymyr_reply
from support.taymyr import EXAMPLE, QUESTION

from tablereason.api import ask
from tablereason.llm import ScriptedLLM
from tablereason.trace import Prediction


@pytest.fixture(scope="module")
def taymyr_prediction() -> Prediction:
    """A real Chain-of-Table run (scripted replies): select row 4, then two columns."""
    llm = ScriptedLLM(fn=lambda request: taymyr_reply(request.as_text()))
    return ask(EXAMPLE, QUESTION, llm=llm, caption="Taymyr Autonomous Okrug")
