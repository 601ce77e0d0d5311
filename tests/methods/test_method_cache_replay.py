"""Whole method runs recorded before the model-call door replay from their cache with no miss.

``tests/fixtures/llm/methods_99df236.*`` were recorded by the code of commit 99df236
(``record_method_cache.py``): Chain-of-Table, ReWOO, ReAct, Chameleon, Text-to-SQL and
Program-of-Thought runs, under the embedded model's name (the profiles that reproduce
the published code, which send no constraint even to a model that enforces them) and
under the scripted model's (every profile: a model that enforces nothing is sent no
constraint). Each replays offline with the current code: the same requests, byte for
byte, so no miss, and the same answers.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tablereason.llm import BACKENDS, CachedLLM, Capabilities, Completion, Request

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm"
MANIFEST = json.loads((FIXTURES / "methods_99df236.json").read_text(encoding="utf-8"))


def _runs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("method_runs", FIXTURES / "method_runs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


METHOD_RUNS = _runs()


class Offline:
    """Stands for the recorded backend (its name, model and capabilities); never asked."""

    def __init__(self, name: str, model: str) -> None:
        self.name, self.model = name, model

    @property
    def capabilities(self) -> Capabilities:
        return BACKENDS.get(self.name).capabilities

    def complete(self, request: Request) -> Completion:
        raise AssertionError(f"offline replay must not call the model: {request.call_site}")

    async def acomplete(self, request: Request) -> Completion:
        raise AssertionError("offline replay must not call the model")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "cache.sqlite"
    shutil.copy(FIXTURES / "methods_99df236.sqlite", path)  # opening it switches it to WAL
    return path


def test_the_manifest_covers_every_method_and_both_backends() -> None:
    runs = MANIFEST["runs"]
    assert {r["method"].split("/")[0] for r in runs} == {
        "chain_of_table", "rewoo", "react", "chameleon", "text_to_sql", "program_of_thought",
    }  # fmt: skip
    assert {r["backend"] for r in runs} == {"local", "scripted"}
    assert BACKENDS.get("local").capabilities.enforces("grammar")  # the door would constrain


@pytest.mark.parametrize(
    "entry",
    MANIFEST["runs"],
    ids=[f"{r['backend']}-{r['method']}-{r['profile']}" for r in MANIFEST["runs"]],
)
def test_a_recorded_method_run_replays_with_no_miss(cache: Path, entry: dict[str, Any]) -> None:
    llm = CachedLLM(Offline(entry["backend"], entry["model"]), cache, offline=True)
    prediction = METHOD_RUNS.run(entry["method"], entry["profile"], llm)
    assert prediction.error == entry["error"]
    assert METHOD_RUNS.answer_json(prediction.answer) == entry["answer"]
    stats = llm.stats()
    assert stats.misses == 0 and stats.hits == entry["requests"]
    assert prediction.trace.usage.requests == entry["requests"]
    asked = [s for s in prediction.trace.steps if s.raw and s.kind != "tool"]  # the model asked
    assert asked and all(s.prompts for s in asked)  # every prompt is kept
