"""bench_constraints.py's summary: paired questions only, and how the plans opened."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

BENCH = Path(__file__).parents[2] / "benchmarks" / "bench_constraints.py"


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_constraints", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # it finds bench_chain_of_table beside itself
    return module


def _record(ident: str, mode: str, replies: list[tuple[str, list[str]]]) -> dict[str, Any]:
    return {
        "id": ident, "task": "tabfact", "mode": mode, "seconds": 2.0 if mode == "on" else 1.0,
        "requests": len(replies), "prompt_tokens": 10, "completion_tokens": 5, "unparsed": 0,
        "violations": 0, "reasks": 0, "invalid": 0, "correct": True, "error": None,
        "replies": [{"step": s, "raw": raw, "error": None} for s, raw in replies],
    }  # fmt: skip


def test_openings_count_add_column_plans_and_their_value_requests() -> None:
    bench = _bench()
    chain = " f_add_column(year) -> f_select_row(row 1) -> <END>"
    records = [
        _record("a", "on", [("add_column", [chain]), ("add_column", ["row 1 : 1", "row 1 : 2"]),
                            ("final_query", [" YES"])]),
        _record("a", "off", [("select_row", ["1) f_select_row(row 1) -> <END>"]),
                             ("final_query", [" YES"])]),
        _record("b", "on", [("select_row", [" f_select_row(row 2) -> <END>"])]),
        _record("b", "off", [("select_row", [" f_select_row(row 2) -> <END>"])]),
        _record("c", "on", [("add_column", [chain])]),  # one mode only: left out
    ]  # fmt: skip
    summary = bench.summarise(records)
    assert summary["plans"]["on"] == {
        "questions": 2, "opens_with_add_column": 1, "add_column_requests": 2,
    }  # fmt: skip
    assert summary["plans"]["off"]["opens_with_add_column"] == 0
    assert summary["time"] == {"pairs": 2, "seconds_on_over_off": 2.0, "median_question_ratio": 2.0}
