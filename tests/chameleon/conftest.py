"""Fixtures for the Chameleon tests: small cut-outs of TabMWP and ScienceQA, a sandbox,
and a scripted model that answers by call site."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablereason.datasets.example import Example
from tablereason.datasets.scienceqa import read_scienceqa
from tablereason.datasets.tabmwp import read_tabmwp
from tablereason.errors import LLMError
from tablereason.llm import Request, ScriptedLLM
from tablereason.sandbox import PythonSandbox

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chameleon"


@pytest.fixture(scope="session")
def tabmwp_examples() -> dict[str, Example]:
    return {ex.id: ex for ex in read_tabmwp(FIXTURES / "tabmwp", "test")}


@pytest.fixture(scope="session")
def scienceqa_examples() -> dict[str, Example]:
    return {ex.id: ex for ex in read_scienceqa(FIXTURES / "scienceqa", "test")}


@pytest.fixture(scope="session")
def box() -> Iterator[PythonSandbox]:
    sandbox = PythonSandbox(workers=1)
    yield sandbox
    sandbox.close()


def routed(**replies: list[str]) -> ScriptedLLM:
    """A scripted model with one reply queue per module (``chameleon/<module>``)."""
    queues = {site: deque(texts) for site, texts in replies.items()}

    def answer(request: Request) -> str:
        site = request.call_site.removeprefix("chameleon/")
        if not queues.get(site):
            raise LLMError(f"no scripted reply left for {site!r}")
        return queues[site].popleft()

    return ScriptedLLM(fn=answer)
