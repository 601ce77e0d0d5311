"""Chameleon with the embedded Gemma 3 270M model on real TabMWP and ScienceQA examples.

Every example must run without an exception, produce a string answer and a full
trace, and be scored by both metrics. Accuracy is not checked (a 270M model is weak).

    .venv/bin/python -m pytest tests/chameleon/test_chameleon_real_model.py -m real_model

The short test takes about 30 s on two idle CPU cores (budgets cut by ``QUICK``); the
ten-and-ten test is also marked slow (about 7 minutes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tablereason.datasets import load_dataset
from tablereason.datasets.example import Example
from tablereason.methods.chameleon import Chameleon, modules_used, score
from tablereason.methods.chameleon.demos import SCIENCEQA_DEMO_PIDS
from tablereason.sandbox import RetrySettings

#: Smaller budgets for the short check, so it stays quick on two CPU cores.
QUICK = {
    "program": RetrySettings(patience=1),
    "sg_patience": 1,
    "planner_max_tokens": 48,
    "solution_max_tokens": 160,
    "program_max_tokens": 128,
    "knowledge_max_tokens": 96,
    "verbalizer_max_tokens": 96,
}


@pytest.fixture(scope="module")
def local_llm() -> Any:
    from tablereason.llm import LocalLlama

    llm = LocalLlama(n_ctx=8192)
    llm.load()
    return llm


def examples(task: str, n: int, data: Path) -> list[Example]:
    items = load_dataset(task, "test", data_dir=data)
    return [ex for ex in items if ex.id not in SCIENCEQA_DEMO_PIDS][:n]


def check(llm: Any, task: str, items: list[Example], **overrides: Any) -> None:
    method = Chameleon(llm, task, **overrides)
    predictions = {}
    for example in items:
        prediction = method.run(example)  # must not raise
        assert prediction.error is None, prediction.error
        assert isinstance(prediction.answer, str)
        assert prediction.has_raw_answer  # what the published TabMWP scoring reads
        assert modules_used(prediction)[-1] == "answer_generator"
        assert prediction.trace.usage.requests >= 1
        json.loads(prediction.trace.to_json())
        predictions[example.id] = prediction
    for result in score(task, predictions, items).values():
        assert result.n == len(items) and 0 <= result.correct <= len(items)


@pytest.mark.real_model
def test_real_model_two_tabmwp_two_scienceqa(local_llm: Any, fixture_data: Path) -> None:
    check(local_llm, "tabmwp", examples("tabmwp", 2, fixture_data), **QUICK)
    check(local_llm, "scienceqa", examples("scienceqa", 2, fixture_data), **QUICK)


@pytest.mark.real_model
@pytest.mark.slow
def test_real_model_ten_tabmwp_ten_scienceqa(local_llm: Any, fixture_data: Path) -> None:
    check(local_llm, "tabmwp", examples("tabmwp", 10, fixture_data))
    check(local_llm, "scienceqa", examples("scienceqa", 10, fixture_data))
    check(local_llm, "tabmwp", examples("tabmwp", 3, fixture_data), profile="paper", **QUICK)
