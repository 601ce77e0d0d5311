"""Reading tables from every supported kind of file, DataFrame or Table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from support.taymyr import EXAMPLE

from tablereason.api import load_table, sniff_delimiter
from tablereason.errors import ConfigurationError, TableParseError
from tablereason.table import Table


def records(table: Table) -> list[list[str]]:
    return table.to_records()


def test_wikitq_csv_with_empty_header_and_spaced_numbers() -> None:
    table = load_table(EXAMPLE, caption="Taymyr")
    assert table.shape == (21, 8)
    assert table.columns[0] == "Column 1"
    assert table.caption == "Taymyr"
    assert table.rows()[3][:3] == ["1985", "51", "1 104"]


def test_wikitq_backslash_escapes_are_read(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('"name","quote"\n"Ann","she said \\"hi\\""\n', encoding="utf-8")
    assert records(load_table(path)) == [["name", "quote"], ["Ann", 'she said "hi"']]


def test_standard_csv_keeps_backslashes_and_doubled_quotes(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('path,note\nC:\\temp,"a ""b"""\n', encoding="utf-8")
    assert records(load_table(path)) == [["path", "note"], ["C:\\temp", 'a "b"']]


def test_excel_export_with_bom_semicolons_and_decimal_commas(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes("\ufeffRegion;Sales\r\nNorth;1,5\r\nSouth;2,25\r\n".encode())
    assert records(load_table(path)) == [["Region", "Sales"], ["North", "1,5"], ["South", "2,25"]]


def test_excel_sep_line_and_windows_1252(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes("sep=;\r\nCité;Prix\r\nNîmes;3,5\r\n".encode("cp1252"))
    assert records(load_table(path)) == [["Cité", "Prix"], ["Nîmes", "3,5"]]


def test_tsv_by_suffix(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_text("a\tb, c\n1\t2, 3\n", encoding="utf-8")
    assert records(load_table(path)) == [["a", "b, c"], ["1", "2, 3"]]


@pytest.mark.parametrize(
    ("name", "payload"),
    [
        ("records.json", [{"team": "Oslo", "wins": 3}, {"team": "Rome", "wins": 5, "x": None}]),
        ("split.json", {"columns": ["team", "wins", "x"], "data": [["Oslo", 3], ["Rome", 5]]}),
        ("rows.json", [["team", "wins", "x"], ["Oslo", 3], ["Rome", 5]]),
        ("columns.json", {"team": ["Oslo", "Rome"], "wins": [3, 5], "x": []}),
    ],
)
def test_json_layouts(tmp_path: Path, name: str, payload: object) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(payload), encoding="utf-8")
    assert records(load_table(path)) == [
        ["team", "wins", "x"],
        ["Oslo", "3", ""],
        ["Rome", "5", ""],
    ]


def test_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2, "b": "x"}\n', encoding="utf-8")
    assert records(load_table(path)) == [["a", "b"], ["1", ""], ["2", "x"]]


def test_dataframe_and_table_sources() -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    table = load_table(frame, caption="c")
    assert records(table) == [["a", "b"], ["1", "x"], ["2", ""]]
    assert load_table(table) is table


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        ("a,b,c\n1,2,3\n", ","),
        ("a;b\n1,5;2,5\n", ";"),
        ("a\tb\n1\t2\n", "\t"),
        ("a|b|c\n1|2|3\n", "|"),
        ('"x;y",z\n"1;2",3\n', ","),
        ("single\nvalue\n", ","),
    ],
)
def test_sniff_delimiter(sample: str, expected: str) -> None:
    assert sniff_delimiter(sample) == expected


def test_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(TableParseError, match="no such file"):
        load_table(tmp_path / "missing.csv")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(TableParseError, match="not valid JSON"):
        load_table(bad)
    odd = tmp_path / "odd.json"
    odd.write_text('"just a string"', encoding="utf-8")
    with pytest.raises(TableParseError, match="expected a list of records"):
        load_table(odd)
    with pytest.raises(ConfigurationError, match="cannot read a table from int"):
        load_table(3)  # type: ignore[arg-type]
