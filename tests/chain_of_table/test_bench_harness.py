"""The benchmark harness runs end to end (with a scripted model) and counts honestly."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).parents[2] / "benchmarks" / "bench_chain_of_table.py"


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_chain_of_table", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_harness_counts_requests_and_keeps_failures_in_the_denominator(
    fixture_data: Path, tmp_path: Path
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
            str(fixture_data),
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


def _record(profile: str, ex_id: str, rows: int, requests: int) -> dict[str, object]:
    return {
        "id": ex_id,
        "task": "tabfact",
        "profile": profile,
        "rows": rows,
        "seconds": 1.0,
        "requests": requests,
        "completions": requests,
        "prompt_tokens": 100 * requests,
        "completion_tokens": 10,
        "answer": "yes",
        "correct": True,
        "error": None,
    }


def test_summary_of_several_logs_pairs_examples_once(tmp_path: Path, capsys) -> None:
    bench = _bench()
    eff, paper = tmp_path / "eff.jsonl", tmp_path / "paper.jsonl"
    eff_records = [
        _record("efficient", "a", 20, 2),
        _record("efficient", "b", 30, 3),
        _record("efficient", "c", 5, 2),
    ]
    eff.write_text("".join(json.dumps(r) + "\n" for r in eff_records))
    # "a" appears twice across the paper logs (a resumed run seeded with earlier
    # results): the later record counts, once; "d" has no efficient partner.
    first = [_record("paper", "a", 20, 9), _record("paper", "d", 40, 6)]
    second = [
        _record("paper", "a", 20, 6),
        _record("paper", "b", 30, 6),
        _record("paper", "c", 5, 4),
    ]
    paper.write_text("".join(json.dumps(r) + "\n" for r in first + second))
    report = bench.main(["--summarise", str(eff), str(paper)])
    summary = {(s["profile"], s["size"]): s for s in report["summary"]}
    assert summary[("paper", ">10 rows")]["n"] == 3  # a, b, d: "a" once
    assert summary[("paper", ">10 rows")]["requests"] == 6.0
    pairs = {p["size"]: p for p in report["pairs"]}
    assert pairs[">10 rows"]["pairs"] == 2 and pairs[">10 rows"]["requests"] == round(5 / 12, 3)
    assert pairs[">10 rows"]["floor"] == round(4 / 12, 3)
    assert pairs["all"]["pairs"] == 3 and pairs["all"]["requests"] == round(7 / 16, 3)
    assert "Efficient over paper" in capsys.readouterr().out
