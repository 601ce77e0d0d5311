"""The benchmark harness runs end to end (with a scripted model) and counts honestly."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).parents[2] / "benchmarks" / "bench_chain_of_table.py"


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_chain_of_table", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_harness_counts_requests_and_keeps_failures_in_the_denominator(
    shared_data: Path, tmp_path: Path
) -> None:
    bench = _bench()
    log = tmp_path / "log.jsonl"
    report = bench.main(
        [
            "--llm",
            "scripted",
            "--tabfact",
            "2",
            "--wikitq",
            "2",
            "--data",
            str(shared_data),
            "--log",
            str(log),
        ]
    )
    results = report["results"]
    assert len(results) == 8  # 4 examples x 2 profiles
    assert all(r["task"] in ("tabfact", "wikitq") for r in results)
    eff = [r for r in results if r["profile"] == "efficient"]
    paper = [r for r in results if r["profile"] == "paper"]
    # scripted plan "f_select_row(row 1) -> END": efficient = plan + final (the chain gives
    # the row); paper asks for the selection (8 samples) and the planner once more.
    assert {r["requests"] for r in eff} == {2} and {r["completions"] for r in eff} == {2}
    assert {r["requests"] for r in paper} == {4} and {r["completions"] for r in paper} == {11}
    summary = {(s["task"], s["profile"], s["size"]): s for s in report["summary"]}
    assert summary[("tabfact", "efficient", "all")]["n"] == 2
    assert len(log.read_text().splitlines()) == 8 + 2  # results and two timings
    tabfact_ids = {r["id"] for r in results if r["task"] == "tabfact"}
    assert tabfact_ids and all(i.startswith("test-") for i in tabfact_ids)
