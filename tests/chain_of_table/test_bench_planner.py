"""The planner probe counts a first planner reply as valid only when it names an allowed op."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tablereason.llm import ScriptedLLM

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def _probe():  # type: ignore[no-untyped-def]
    # Loaded by file path; the probe finds its sibling bench_chain_of_table by itself.
    spec = importlib.util.spec_from_file_location(
        "bench_cot_planner", BENCHMARKS / "bench_cot_planner.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_probe_sends_only_the_first_planner_call_and_counts_digits(fixture_data: Path) -> None:
    probe = _probe()
    examples = probe.tabfact_sample(fixture_data, 2)
    replies = iter(["1000000000", " f_group_column(a) -> f_sort_column(b)"])
    llm = ScriptedLLM(fn=lambda request: next(replies))
    first, second = (probe.first_plan(llm, "paper", e) for e in examples)
    assert len(llm.requests) == 2 and all(r.call_site.endswith("/plan") for r in llm.requests)
    assert (first["valid"], first["digits"], first["chosen"]) == (False, True, "<END>")
    assert (second["valid"], second["digits"], second["chosen"]) == (True, False, "group_column")
    summary = probe.summarise([first, second])
    assert (summary["n"], summary["valid"], summary["digits"]) == (2, 1, 1)


def test_digit_runs() -> None:
    probe = _probe()
    assert probe.is_digits("10000000") and probe.is_digits("1)\n2)\n3)")
    assert not probe.is_digits("1) f_select_row(row 1) -> <END>") and not probe.is_digits("")
