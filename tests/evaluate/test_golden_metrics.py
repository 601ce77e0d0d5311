"""Golden metric cases: one JSON line per case in tests/fixtures/metrics/<metric>.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablereason.datasets import Example
from tablereason.evaluate import METRICS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "metrics"


def _cases() -> list[tuple[str, int, dict]]:
    cases = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                cases.append((path.stem, number, json.loads(line)))
    return cases


CASES = _cases()


def test_every_registered_metric_has_golden_cases() -> None:
    counts: dict[str, int] = {}
    for name, _, _ in CASES:
        counts[name] = counts.get(name, 0) + 1
    for name in METRICS.names():
        assert counts.get(name, 0) >= 5, f"metric {name!r} needs golden cases in {FIXTURES}"
    assert set(counts) <= set(METRICS.names()), "fixture files for unregistered metrics"


def test_golden_cases_have_both_outcomes() -> None:
    # Each metric's fixture must contain right and wrong answers, or it tests little.
    by_metric: dict[str, set[float]] = {}
    for name, _, case in CASES:
        by_metric.setdefault(name, set()).add(float(case["expected"]) > 0)
    assert all(outcomes == {True, False} for outcomes in by_metric.values()), by_metric


@pytest.mark.parametrize(("metric", "line", "case"), CASES, ids=[f"{m}:{n}" for m, n, _ in CASES])
def test_golden_case(metric: str, line: int, case: dict) -> None:
    example = Example(dataset=metric.split("_")[0], id="ex", question="q", **case["example"])
    result = METRICS.get(metric)({"ex": case["prediction"]}, [example])
    assert result.n == 1
    assert result.score == pytest.approx(case["expected"], abs=1e-9), case["why"]
