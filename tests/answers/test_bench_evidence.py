"""benchmarks/bench_evidence.py: the evidence of right chains holds the gold cells, unwarned."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_evidence.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(BENCH.parent))  # the benchmark imports its sibling modules
    spec = importlib.util.spec_from_file_location("bench_evidence", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_wikitq_one_cell_questions_cite_their_cell(bench: ModuleType) -> None:
    result = bench.bench_wikitq()
    for chain in ("select", "direct"):
        summary = result[chain]["summary"]
        assert summary["questions"] >= 15 and summary["right"] == summary["questions"]
        assert summary["share_containing_gold"] == 1.0
        assert summary["right_with_warnings"] == 0
    for chain in ("select", "direct"):  # a count answer read as an average once cited 20
        assert result[chain]["summary"]["mean_precision"] == 1.0


def test_every_warning_code_has_its_wrong_run(bench: ModuleType) -> None:
    from tablereason.answers.records import WARNING_CODES

    result = bench.bench_warnings()
    assert result["raised"] == result["codes"] == len(WARNING_CODES)
    assert {case["code"] for case in result["cases"]} == set(WARNING_CODES)


@pytest.mark.slow
def test_the_51_large_table_questions_cite_their_gold_cells(bench: ModuleType) -> None:
    summary = bench.bench_large(2000)["summary"]
    assert summary["questions"] == summary["right"] == 51
    assert summary["share_containing_gold"] >= 0.99
    assert summary["right_with_warnings"] == 0
