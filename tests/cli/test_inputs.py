"""Inputs and output of `ask`: suffixes and --format, tables without rows, wide tables."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from support.scripted_server import ScriptedServer, wikitq_reply

from tablereason.api import ask, load_table
from tablereason.cli import EXIT_INPUT, EXIT_NO_ANSWER, EXIT_OK, EXIT_USAGE, main
from tablereason.errors import ConfigurationError
from tablereason.llm import ScriptedLLM
from tablereason.table.io.readers import FORMATS, UnknownFormatError
from tablereason.trace import TraceStep
from tablereason.trace.console import TraceView

CSV_TEXT = "city,people\nOslo,0.7\nRome,2.8\n"


@pytest.mark.parametrize("name", ["README.md", "script.py", "page.html", "notes", "data.dat"])
def test_a_suffix_that_names_no_format_is_refused(
    wikitq_server: ScriptedServer, tmp_path: Path, capsys, name: str
) -> None:
    path = tmp_path / name
    path.write_text(CSV_TEXT, encoding="utf-8")  # even when it would parse as CSV
    assert main(["ask", str(path), "how many rows?"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "names no table format" in err
    assert "--format csv|tsv|json|jsonl|xlsx|parquet|arrow|database" in err
    assert wikitq_server.counts.received == 0  # refused before any model is asked
    assert main(["ask", str(path), "which city?", "--format", "csv", "--answer-only"]) == EXIT_OK
    assert capsys.readouterr().out == "Oslo\n"


def test_the_repository_readme_is_refused(wikitq_server: ScriptedServer, capsys) -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    assert main(["ask", str(readme), "how many rows?"]) == EXIT_INPUT
    assert "README.md: its suffix '.md' names no table format" in capsys.readouterr().err


def test_format_chooses_the_reader_whatever_the_suffix(tmp_path: Path) -> None:
    tsv = tmp_path / "export.dat"
    tsv.write_text("a b\tc\n1 2\t3\n", encoding="utf-8")
    assert load_table(tsv, format="tsv").columns == ["a b", "c"]
    as_json = tmp_path / "rows.txt"
    as_json.write_text(json.dumps([{"x": 1}, {"x": 2}]), encoding="utf-8")
    assert load_table(as_json, format="json").num_rows == 2
    lines = tmp_path / "rows.log"
    lines.write_text('{"x": 1}\n{"x": 2}\n', encoding="utf-8")
    assert load_table(lines, format="JSONL").rows() == [["1"], ["2"]]
    with pytest.raises(UnknownFormatError, match="format='csv'"):
        load_table(lines)
    with pytest.raises(ConfigurationError, match="csv, tsv, json, jsonl, xlsx, parquet"):
        load_table(lines, format="orc")


def test_format_xlsx_reads_a_workbook_of_any_name(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["team", "points"])
    book.active.append(["ann", 12])
    path = tmp_path / "book.xlsx"
    book.save(path)
    renamed = path.rename(tmp_path / "book.download")
    assert load_table(renamed, format="xlsx").rows() == [["ann", "12"]]


def test_an_unknown_format_is_a_usage_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "t.csv"
    path.write_text(CSV_TEXT, encoding="utf-8")
    assert main(["ask", str(path), "q?", "--format", "orc"]) == EXIT_USAGE
    assert "choose one of csv, tsv, json, jsonl, xlsx, parquet, arrow" in capsys.readouterr().err


def test_the_help_lists_every_format(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["ask", "--help"])
    helped = " ".join(capsys.readouterr().out.split())
    described = helped[helped.index("--format FORMAT how to read") :]
    assert all(name in described.split("(default")[0] for name in FORMATS)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("header.csv", "city,people\n"),
        ("header.tsv", "city\tpeople\n"),
        ("header.json", '{"columns": ["city", "people"], "data": []}'),
        ("header.jsonl", '["city", "people"]\n'),
    ],
)
def test_a_table_without_rows_is_answered_without_the_model(
    wikitq_server: ScriptedServer, tmp_path: Path, capsys, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert main(["ask", str(path), "how many cities?"]) == EXIT_NO_ANSWER
    out = capsys.readouterr().out
    assert "Failed: the table has no rows, only a header (city, people)" in out
    assert "the model was not asked" in out
    assert wikitq_server.counts.received == 0
    assert main(["ask", str(path), "how many cities?", "--answer-only"]) == EXIT_NO_ANSWER
    assert "no answer: the table has no rows" in capsys.readouterr().err


def test_tr_ask_on_an_empty_table_sends_nothing_to_the_model() -> None:
    llm = ScriptedLLM(replies=[])
    prediction = ask(load_table_from_text("a,b\n"), "q?", llm=llm)
    assert prediction.error and "no rows" in prediction.error and llm.requests == []
    assert [s.kind for s in prediction.trace.steps] == ["input"]


def load_table_from_text(text: str):
    import tempfile

    folder = Path(tempfile.mkdtemp())
    (folder / "t.csv").write_text(text, encoding="utf-8")
    return load_table(folder / "t.csv")


def _wide_csv(path: Path, columns: int = 30) -> Path:
    header = [f"measure {i:02d}" for i in range(columns)]
    rows = [[f"value-{r}{i:02d}" for i in range(columns)] for r in range(3)]
    path.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n", encoding="utf-8")
    return path


def test_a_wide_table_keeps_readable_columns_and_says_how_to_see_the_rest(
    tmp_path: Path, capsys
) -> None:
    wide = _wide_csv(tmp_path / "wide.csv")
    page = tmp_path / "trace.html"
    with ScriptedServer(wikitq_reply) as server:
        argv = ["ask", str(wide), "first value?", "--base-url", server.url, "--model", "m"]
        assert main(argv) == EXIT_OK
        out = capsys.readouterr().out
        assert main([*argv, "--html", str(page)]) == EXIT_OK
    shown = [i for i in range(30) if f"value-0{i:02d}" in out]
    assert 3 <= len(shown) < 30 and shown == list(range(len(shown)))  # from the left
    assert "…" not in "".join(line for line in out.splitlines() if "value-" in line)
    hidden = 30 - len(shown)
    note = re.search(r"(\d+) more columns not shown \((.*?)\); see every column with --html", out)
    assert note and int(note.group(1)) == hidden, out
    assert note.group(2).startswith(f"measure {len(shown):02d}")
    assert all(f"value-0{i:02d}" in page.read_text(encoding="utf-8") for i in range(30))


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("width", [50, 80, 140])
def test_on_a_terminal_the_columns_fit_its_width_and_added_ones_are_kept(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    header = [f"measure {i:02d}" for i in range(20)]
    before = {"header": header, "rows": [[f"v{i:02d}" for i in range(20)]]}
    after = {"header": [*header, "added total"], "rows": [[*before["rows"][0], "sum-1234"]]}
    out = Terminal()
    view = TraceView(out, hidden_hint="see every column with --html PAGE")
    view.step(1, {"kind": "operation", "name": "add_column", "table": after}, before)
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out.getvalue())
    table_lines = [line for line in text.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= width
    assert "sum-1234" in text  # the column the step added is shown, whole
    assert "v00" in text and "…" not in "".join(line for line in text.splitlines() if "v0" in line)
    if width < 140:
        assert "more columns not shown" in text and "--html PAGE" in text


def test_the_library_says_how_to_see_hidden_columns_in_python() -> None:
    from tablereason.trace.console import print_trace

    out = io.StringIO()
    table = {"header": [f"column {i}" for i in range(40)], "rows": [["x" * 10] * 40]}
    step = TraceStep(kind="input", name="table").to_dict() | {"table": table}
    print_trace({"question": "q", "steps": [step]}, file=out)
    assert "Prediction.to_html() shows every column" in out.getvalue()
