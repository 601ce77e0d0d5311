"""``eval`` with the embedded model and concurrency > 1: a context per running example."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablereason.evaluate.benchmark import BenchmarkSpec, _method_for
from tablereason.llm import LocalLlama
from tablereason.llm.wrappers.base import LLMWrapper


def _bare(model: object) -> object:
    while isinstance(model, LLMWrapper):
        model = model.inner
    return model


@pytest.mark.parametrize("concurrency", [1, 4])
def test_the_embedded_model_gets_a_worker_per_concurrent_example(
    tmp_path: Path, concurrency: int
) -> None:
    spec = BenchmarkSpec(
        dataset="tabfact", out=str(tmp_path / "run"), model="local", concurrency=concurrency
    )
    _, watch, _, _, _ = _method_for(spec, None, progress=False)
    model = _bare(watch)
    assert isinstance(model, LocalLlama) and model.workers == concurrency
    assert model._pool.loaded == 0  # building the run loads nothing


def test_a_model_passed_in_keeps_its_workers(tmp_path: Path) -> None:
    given = LocalLlama("model.gguf", workers=2)
    spec = BenchmarkSpec(dataset="tabfact", out=str(tmp_path / "run"), concurrency=4)
    _method_for(spec, given, progress=False)
    assert given.workers == 2
