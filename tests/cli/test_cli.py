"""The command line, end to end against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.taymyr import EXAMPLE, QUESTION

from tablereason.cli import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_MODEL,
    EXIT_NO_ANSWER,
    EXIT_OK,
    EXIT_USAGE,
    exit_code,
    main,
)
from tablereason.errors import (
    ConfigurationError,
    DatasetError,
    LLMError,
    MissingDependencyError,
    TableParseError,
    TableReasonError,
    UnknownNameError,
)
from tablereason.evaluate.results import ResultFileError, read_results


def test_ask_prints_every_intermediate_table_and_the_answer(taymyr_server, capsys) -> None:
    assert main(["ask", str(EXAMPLE), QUESTION]) == EXIT_OK
    out = capsys.readouterr().out
    assert "21 rows × 8 columns" in out  # the input table
    assert "1 rows × 8 columns" in out  # after select_row
    assert "1 rows × 2 columns" in out  # after select_column
    assert "operation · select_row" in out and "operation · select_column" in out
    assert "1 104" in out
    assert out.rstrip().endswith("Answer: 1985\nEvidence: row 4, Column 1 = 1985")


def test_answer_only_and_json_output(taymyr_server, capsys) -> None:
    assert main(["ask", str(EXAMPLE), QUESTION, "--answer-only"]) == EXIT_OK
    assert capsys.readouterr().out == "1985\n"
    assert main(["ask", str(EXAMPLE), QUESTION, "--json"]) == EXIT_OK
    payload = json.loads(capsys.readouterr().out)
    assert payload["answer"] == ["1985"] and payload["error"] is None
    kinds = [s["kind"] for s in payload["trace"]["steps"]]
    assert kinds.count("operation") == 2 and kinds[-1] == "answer"
    asked = [s for s in payload["trace"]["steps"] if s["raw"]]
    assert asked and all(s["prompts"] for s in asked)  # the exact text of every request
    final = payload["trace"]["steps"][-1]["prompts"][-1]
    assert QUESTION in final and final.rstrip().endswith("The answer is:")


def test_html_page_and_offline_replay_from_the_cache(taymyr_server, tmp_path, capsys) -> None:
    page, cache = tmp_path / "trace.html", tmp_path / "answers.sqlite"
    args = ["ask", str(EXAMPLE), QUESTION, "--cache", str(cache)]
    assert main([*args, "--html", str(page)]) == EXIT_OK
    assert "<table" in page.read_text(encoding="utf-8")
    calls = taymyr_server.counts.replies
    capsys.readouterr()
    assert main([*args, "--offline", "--answer-only"]) == EXIT_OK
    assert capsys.readouterr().out == "1985\n"
    assert taymyr_server.counts.replies == calls  # replayed, no request reached the server


def test_no_answer_exit_code(taymyr_server, tmp_path, capsys) -> None:
    empty = tmp_path / "empty.sqlite"
    code = main(["ask", str(EXAMPLE), QUESTION, "--cache", str(empty), "--offline"])
    assert code == EXIT_NO_ANSWER
    assert "Failed: offline: no recorded response" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["ask", "missing.csv", "q?"], EXIT_INPUT, "no such file"),
        (["ask", str(EXAMPLE), "q?", "--method", "chain_of_tabel"], EXIT_USAGE, "did you mean"),
        (["ask", str(EXAMPLE), "q?", "--option", "novalue"], EXIT_USAGE, "KEY=VALUE"),
        (["ask", str(EXAMPLE), "q?", "--option", "select_samples=0"], EXIT_USAGE, "not valid"),
        (["report", "no/such/run"], EXIT_INPUT, "no results.jsonl"),
        (["eval", "--dataset", "wikitq", "--out", "x", "--data-dir", "/nope"], EXIT_INPUT, "nope"),
        (["eval", "--dataset", "wikitk", "--out", "x"], EXIT_USAGE, "did you mean 'wikitq'"),
    ],
)
def test_error_exit_codes(taymyr_server, capsys, argv, code, message) -> None:
    assert main(argv) == code
    assert message in capsys.readouterr().err


def test_argparse_usage_errors_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["ask", str(EXAMPLE)])
    assert raised.value.code == EXIT_USAGE
    with pytest.raises(SystemExit) as raised:
        main(["frobnicate"])
    assert raised.value.code == EXIT_USAGE


@pytest.mark.parametrize("command", ["ask", "eval", "merge", "report", "show", "datasets"])
def test_every_command_has_help_with_examples(command, capsys) -> None:
    with pytest.raises(SystemExit) as raised:
        main([command, "--help"])
    assert raised.value.code == EXIT_OK
    out = capsys.readouterr().out
    assert "examples:" in out and f"tablereason {command}" in out


def test_exit_code_mapping() -> None:
    assert exit_code(ConfigurationError("x")) == EXIT_USAGE
    assert exit_code(UnknownNameError("x")) == EXIT_USAGE
    assert exit_code(TableParseError("x")) == EXIT_INPUT
    assert exit_code(DatasetError("x")) == EXIT_INPUT
    assert exit_code(ResultFileError("x")) == EXIT_INPUT
    assert exit_code(LLMError("x")) == EXIT_MODEL
    assert exit_code(MissingDependencyError("x")) == EXIT_MODEL
    assert exit_code(TableReasonError("x")) == EXIT_INTERNAL
    assert exit_code(KeyboardInterrupt()) == EXIT_INTERRUPTED


def test_datasets_lists_local_splits(monkeypatch, fixture_data, capsys) -> None:
    assert main(["datasets", "--data-dir", str(fixture_data)]) == EXIT_OK
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("wikitq"))
    assert "test" in line and "wikitq_accuracy" in line and "chain_of_table" in line
    monkeypatch.delenv("TABLEREASON_DATA_DIR", raising=False)
    assert main(["datasets"]) == EXIT_INPUT
    assert "TABLEREASON_DATA_DIR" in capsys.readouterr().err


def test_eval_report_show_on_real_wikitq(wikitq_server, fixture_data, tmp_path, capsys) -> None:
    out = tmp_path / "run"
    argv = ["eval", "--dataset", "wikitq", "--data-dir", str(fixture_data), "--limit", "5"]
    argv += ["--out", str(out), "--concurrency", "2", "--quiet"]
    assert main(argv) == EXIT_OK
    printed = capsys.readouterr().out
    assert "5 examples (0 resumed, 5 run, 0 failed)" in printed
    config, records, _ = read_results(out / "results.jsonl")
    assert config.dataset == "wikitq" and config.method == "chain_of_table"
    assert config.model == "openai:fake-model" and len(records) == 5
    assert main(argv) == EXIT_OK  # a rerun resumes everything and calls nothing
    assert "(5 resumed, 0 run, 0 failed)" in capsys.readouterr().out

    assert main(["report", str(out)]) == EXIT_OK
    assert "wikitq_accuracy" in capsys.readouterr().out
    assert (out / "report.html").is_file()
    assert len(list((out / "examples").glob("*.html"))) == 5

    assert main(["show", str(out)]) == EXIT_OK
    listing = capsys.readouterr().out
    assert all(r["id"] in listing for r in records)
    first = records[0]["id"]
    page = tmp_path / "one.html"
    assert main(["show", str(out), "--example", first, "--html", str(page)]) == EXIT_OK
    shown = capsys.readouterr().out
    assert f"Example {first}" in shown and "Answer:" in shown and page.is_file()
    assert "--- prompt 1 of" not in shown
    asked = [s for s in records[0]["trace"]["steps"] if s["prompts"]]
    assert asked and "<details class='prompts'>" in page.read_text(encoding="utf-8")
    assert main(["show", str(out), "--example", first, "--prompts"]) == EXIT_OK
    shown = capsys.readouterr().out
    assert shown.count("--- prompt 1 of") == len(asked)
    last = asked[-1]["prompts"][-1].splitlines()[-1]
    assert last in shown  # the prompt's own text, line by line
    assert main(["show", str(out), "--example", "nt-does-not-exist"]) == EXIT_USAGE


def test_console_script_end_to_end(taymyr_server, tmp_path) -> None:
    script = Path(sys.executable).parent / "tablereason"
    assert script.is_file(), "the console script is missing; reinstall with pip install -e ."
    env = {
        **os.environ,
        "OPENAI_BASE_URL": taymyr_server.url,
        "OPENAI_API_KEY": "unused",
        "OPENAI_MODEL": "fake-model",
    }
    done = subprocess.run(
        [str(script), "ask", str(EXAMPLE), QUESTION],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert "Answer: 1985" in done.stdout
    bad = subprocess.run(
        [str(script), "ask", str(tmp_path / "none.csv"), QUESTION],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert bad.returncode == EXIT_INPUT and "no such file" in bad.stderr
