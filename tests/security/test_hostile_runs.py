"""Run folders: planted symlinks are never written through; damaged result lines are named.

``tablereason report`` writes ``report.html`` and ``examples/*.html`` into a run folder;
a symlink there that leads outside it is refused (exit code 3) and nothing outside is
touched. A result file whose lines are too deep, not objects, or of the wrong shape, and
a malformed run configuration, give one clear error naming the file and the line.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_files import CONFIG, record, trace, write_run

from tablereason.cli import EXIT_INPUT, EXIT_OK, main
from tablereason.errors import ConfigurationError
from tablereason.evaluate.report import build_report, summarize
from tablereason.evaluate.report.show import show
from tablereason.evaluate.results import ResultFileError, RunConfig, open_results, read_results
from tablereason.evaluate.run_folder import RunFolderError

CANARY = "canary: must stay as it is\n"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(
        tmp_path / "run",
        [record("nt-0", trace=trace("q", "a", "a")), record("nt-1", trace=trace("q", "b", "b"))],
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "canary.txt").write_text(CANARY)
    return folder


def untouched(outside: Path) -> bool:
    return (
        sorted(p.name for p in outside.iterdir()) == ["canary.txt"]
        and (outside / "canary.txt").read_text() == CANARY
    )


def refused(run: Path, capsys, *extra: str) -> str:
    assert main(["report", str(run), *extra]) == EXIT_INPUT
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err.count("\n") == 1
    return captured.err


def test_report_html_symlink_out_is_refused(run, outside, capsys) -> None:
    (run / "report.html").symlink_to(outside / "canary.txt")
    err = refused(run, capsys)
    assert "report.html is a symlink to" in err and "outside the run folder" in err
    assert untouched(outside) and not (run / "examples").exists()  # refused before writing


def test_examples_folder_symlink_out_is_refused(run, outside, capsys) -> None:
    (run / "examples").symlink_to(outside, target_is_directory=True)
    assert "examples is a symlink" in refused(run, capsys)
    assert untouched(outside)


def test_page_symlink_out_is_refused(run, outside, capsys) -> None:
    (run / "examples").mkdir()
    (run / "examples" / "nt-1.html").symlink_to(outside / "canary.txt")
    assert "examples/nt-1.html is a symlink" in refused(run, capsys)
    assert untouched(outside)


def test_dangling_and_relative_symlinks_out_are_refused(run, outside, capsys) -> None:
    (run / "report.html").symlink_to(outside / "new.html")  # dangling: would create it
    refused(run, capsys)
    (run / "report.html").unlink()
    (run / "report.html").symlink_to(Path("..") / "outside" / "canary.txt")
    refused(run, capsys)
    assert untouched(outside)


def test_a_link_chain_that_ends_outside_is_refused(run, outside, capsys) -> None:
    (run / "inner").symlink_to(outside, target_is_directory=True)
    (run / "examples").symlink_to(run / "inner", target_is_directory=True)
    refused(run, capsys)
    assert untouched(outside)


def test_out_folder_with_a_planted_link_is_refused(run, outside, tmp_path, capsys) -> None:
    elsewhere = tmp_path / "pages"
    elsewhere.mkdir()
    (elsewhere / "report.html").symlink_to(outside / "canary.txt")
    refused(run, capsys, "--out", str(elsewhere))
    assert untouched(outside)


def test_links_that_stay_inside_are_replaced_not_followed(run, capsys) -> None:
    (run / "notes.txt").write_text("mine\n")
    (run / "report.html").symlink_to(run / "notes.txt")
    (run / "pages").mkdir()
    (run / "examples").symlink_to(run / "pages", target_is_directory=True)
    assert main(["report", str(run)]) == EXIT_OK
    capsys.readouterr()
    assert (run / "notes.txt").read_text() == "mine\n"  # not written through
    assert not (run / "report.html").is_symlink() and "<html" in (run / "report.html").read_text()
    assert (run / "pages" / "nt-0.html").is_file()


def test_a_folder_where_the_report_goes_is_refused(run, capsys) -> None:
    (run / "report.html").mkdir()
    assert "it is a folder" in refused(run, capsys)


def test_a_run_folder_reached_through_a_link_still_works(run, tmp_path, capsys) -> None:
    alias = tmp_path / "latest"
    alias.symlink_to(run, target_is_directory=True)
    assert main(["report", str(alias)]) == EXIT_OK
    capsys.readouterr()
    assert (run / "report.html").is_file() and (run / "examples" / "nt-1.html").is_file()


def test_results_are_never_appended_through_a_link_out(tmp_path, outside) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.jsonl").symlink_to(outside / "canary.txt")
    with pytest.raises(ResultFileError, match="outside its folder"):
        open_results(folder / "results.jsonl", RunConfig(dataset="wikitq"))
    assert untouched(outside)


def test_refusals_are_run_folder_errors(run, outside) -> None:
    (run / "report.html").symlink_to(outside / "canary.txt")
    with pytest.raises(RunFolderError):
        build_report(run)


# --- damaged result files -----------------------------------------------------------------


def write_lines(folder: Path, lines: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def good(example: str = "nt-0", **fields: Any) -> str:
    return json.dumps(record(example, **fields))


CONFIG_LINE = json.dumps(CONFIG)

# name, the file's lines, the line number the error names, what it says
DAMAGED: list[tuple[str, list[str], int, str]] = [
    ("deep", [CONFIG_LINE, good(), "[" * 5000 + "]" * 5000], 3, "nests deeper than"),
    ("deep-object", [CONFIG_LINE, '{"a":' * 3000 + "1" + "}" * 3000], 2, "nests deeper"),
    (
        "deep-trace",
        [CONFIG_LINE, good(trace={"steps": [json.loads("[" * 70 + "]" * 70)]})],
        2,
        "deeper",
    ),
    ("array-line", [CONFIG_LINE, "[1, 2]"], 2, "JSON list, not an object"),
    ("number-line", [CONFIG_LINE, good(), "5"], 3, "JSON int, not an object"),
    ("string-line", [CONFIG_LINE, '"result"'], 2, "JSON str"),
    ("null-line", [CONFIG_LINE, "null"], 2, "JSON NoneType"),
    ("config-array", ["[]"], 1, "not an object"),
    ("config-seed", [json.dumps({**CONFIG, "seed": "x"}), good()], 1, "seed"),
    ("config-hashes", [json.dumps({**CONFIG, "prompt_hashes": [1]})], 1, "prompt_hashes"),
    ("config-extra", [json.dumps({**CONFIG, "extra": "big"})], 1, "extra"),
    ("config-total", [json.dumps({**CONFIG, "extra": {"total": "ten"}})], 1, "extra.total"),
    ("config-limit", [json.dumps({**CONFIG, "limit": [5]})], 1, "limit"),
    ("no-id", [CONFIG_LINE, json.dumps({"type": "result", "score": 1})], 2, "its id is None"),
    ("list-id", [CONFIG_LINE, good(["a"])], 2, "its id is ['a']"),
    ("score-text", [CONFIG_LINE, good(score="abc")], 2, "its score is 'abc'"),
    ("score-bool", [CONFIG_LINE, good(score=True)], 2, "its score is True"),
    ("duration-text", [CONFIG_LINE, good(duration_s="slow")], 2, "duration_s"),
    ("tokens-list", [CONFIG_LINE, good(prompt_tokens=[1])], 2, "prompt_tokens"),
    ("cost-text", [CONFIG_LINE, good(cost="free")], 2, "cost"),
    ("operations-text", [CONFIG_LINE, good(operations="3")], 2, "operations"),
    ("groups-text", [CONFIG_LINE, good(groups="a")], 2, "groups is not a JSON array"),
    ("companions-list", [CONFIG_LINE, good(companion_scores=[1])], 2, "companion_scores"),
    ("companion-text", [CONFIG_LINE, good(companion_scores={"f1": "x"})], 2, "companion_scores.f1"),
    ("trace-list", [CONFIG_LINE, good(trace=[1])], 2, "trace is not a JSON object"),
    ("steps-object", [CONFIG_LINE, good(trace={"steps": {"a": 1}})], 2, "trace.steps"),
    ("step-number", [CONFIG_LINE, good(trace={"steps": [1]})], 2, "trace step 1 is not"),
    ("step-args", [CONFIG_LINE, good(trace={"steps": [{"arguments": [1]}]})], 2, "arguments"),
    ("step-raw", [CONFIG_LINE, good(trace={"steps": [{"raw": "x"}]})], 2, "raw"),
    (
        "step-usage",
        [CONFIG_LINE, good(trace={"steps": [{"usage": {"requests": "2"}}]})],
        2,
        "usage",
    ),
    ("step-duration", [CONFIG_LINE, good(trace={"steps": [{"duration_s": "1"}]})], 2, "duration"),
    (
        "table-rows",
        [CONFIG_LINE, good(trace={"steps": [{"table": {"header": [], "rows": "x"}}]})],
        2,
        "table",
    ),
    (
        "table-row",
        [CONFIG_LINE, good(trace={"steps": [{"table": {"header": ["a"], "rows": [1]}}]})],
        2,
        "table",
    ),
    ("table-header", [CONFIG_LINE, good(trace={"steps": [{"table": {"rows": []}}]})], 2, "table"),
    ("bad-utf8", [CONFIG_LINE, '{"type": "result", "id": "\udcff"}'], 2, "not valid JSON"),
    ("broken-middle", [CONFIG_LINE, '{"type": "res', good()], 2, "not valid JSON"),
]


def _write(folder: Path, lines: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n"
    (folder / "results.jsonl").write_bytes(data)
    return folder


@pytest.mark.parametrize(("name", "lines", "line", "says"), DAMAGED, ids=[c[0] for c in DAMAGED])
def test_damaged_lines_are_named(tmp_path, name, lines, line, says) -> None:
    folder = _write(tmp_path / name, lines)
    with pytest.raises(ResultFileError) as caught:
        read_results(folder / "results.jsonl")
    message = str(caught.value)
    assert f"results.jsonl: line {line}" in message and says in message


@pytest.mark.parametrize("command", [["report"], ["show"], ["show", "--example", "nt-0"]])
@pytest.mark.parametrize("case", ["deep", "config-seed", "score-text", "step-number"])
def test_cli_commands_exit_3_with_one_line(tmp_path, capsys, command, case) -> None:
    _, lines, line, _ = next(c for c in DAMAGED if c[0] == case)
    folder = _write(tmp_path / case, lines)
    assert main([command[0], str(folder), *command[1:]]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert f"line {line}" in err and "Traceback" not in err and err.count("\n") == 1


def test_a_torn_last_line_is_still_tolerated(tmp_path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.jsonl").write_text(CONFIG_LINE + "\n" + good() + "\n" + '{"type": "re')
    _, records, _ = read_results(folder / "results.jsonl")
    assert [r["id"] for r in records] == ["nt-0"]


def test_brackets_inside_strings_do_not_count(tmp_path) -> None:
    folder = _write(tmp_path / "run", [CONFIG_LINE, good(answer=["[" * 500], error="{" * 500)])
    assert summarize(folder).done == 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
FIELDS = [
    "id",
    "score",
    "answer",
    "gold",
    "error",
    "duration_s",
    "prompt_tokens",
    "groups",
    "companion_scores",
    "trace",
    "operations",
    "table_rows",
    "cost",
    "requests",
]
STEP_FIELDS = ["kind", "name", "arguments", "raw", "usage", "table", "duration_s", "note", "error"]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    field=st.sampled_from(FIELDS),
    value=json_values,
    step_field=st.sampled_from(STEP_FIELDS),
    step_value=json_values,
)
def test_any_field_value_reports_or_is_named(
    tmp_path, field, value, step_field, step_value
) -> None:
    base = record("nt-0", trace=trace("q", "a", "a"))
    base["trace"]["steps"][1][step_field] = step_value
    base[field] = value
    folder = _write(tmp_path / "any", [CONFIG_LINE, json.dumps(base)])
    try:
        build_report(folder)
        show(folder, file=io.StringIO())
    except ResultFileError as error:
        assert "results.jsonl: line 2" in str(error)
        return
    try:
        show(folder, example=str(base["id"]), file=io.StringIO())
    except ConfigurationError as error:  # documented: a record without a trace
        assert "has no trace" in str(error)
