"""The composed methods from the command line: ask, eval, report and show, by name and options."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.taymyr import EXAMPLE

from tablereason.cli import EXIT_OK, main
from tablereason.evaluate.results import read_results


def test_ask_with_self_consistency_options(
    taymyr_server, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["ask", str(EXAMPLE), "what year was the first to reach 1,000 or more live births?",
            "--method", "self_consistency", "--option", "inner=chain_of_table", "--option", "k=3",
            "--option", "temperature=0.7", "--option", "workers=1"]  # fmt: skip
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert "Run 3 of 3: chain_of_table #3" in out and "Vote: " in out
    assert "Answer: " in out


def test_eval_report_and_show_a_composed_run(
    wikitq_server, fixture_data, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["eval", "--dataset", "wikitq", "--data-dir", str(fixture_data), "--limit", "2",
            "--out", str(out), "--quiet", "--method", "mix_sc", "--option", "k=2",
            "--option", "symbolic=text_to_sql"]  # fmt: skip
    assert main(argv) == EXIT_OK
    config, records, _ = read_results(out / "results.jsonl")
    assert config.method == "mix_sc" and len(records) == 2
    for record in records:
        runs = record["trace"]["runs"]
        assert [r["method"] for r in runs] == [
            "chain_of_table #1", "chain_of_table #2", "text_to_sql #1", "text_to_sql #2",
        ]  # fmt: skip
        assert record["requests"] == sum(r["usage"]["requests"] for r in runs)
    capsys.readouterr()
    assert main(["report", str(out)]) == EXIT_OK
    text = capsys.readouterr().out
    assert "95% interval" in text and "per correct answer" in text
    assert main(["show", str(out), "--example", records[0]["id"]]) == EXIT_OK
    assert "Run 4 of 4: text_to_sql #2" in capsys.readouterr().out
