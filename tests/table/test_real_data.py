"""Every WikiTQ and TabFact table loads, round-trips and prints: the fixtures' tables
(the awkward ones among them), and every table of the full data when it is present."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tablereason import Table


def wikitq_tsv_rows(path: Path) -> list[list[str]]:
    """The release's TSV copy of a table, unescaped independently of the CSV reader."""

    def unescape(cell: str) -> str:
        out, i = [], 0
        while i < len(cell):
            if cell[i] == "\\" and i + 1 < len(cell):
                out.append({"n": "\n", "p": "|", "\\": "\\"}.get(cell[i + 1], cell[i + 1]))
                i += 2
            else:
                out.append(cell[i])
                i += 1
        return "".join(out)

    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [[unescape(c) for c in line.split("\t")] for line in lines]


def _spaces(rows: list[list[str]]) -> list[list[str]]:
    return [[re.sub(" +", " ", c.replace("\xa0", " ")) for c in row] for row in rows]


def reference_pipe(header: list[str], rows: list[list[str]], caption: str | None) -> str:
    """The PIPE form as docs/chain_of_table.md describes it, written for the test."""
    text = f"table caption : {caption}\n" if caption is not None else ""
    text += "col : " + " | ".join(header) + "\n"
    for i, row in enumerate(rows, start=1):
        text += f"row {i} : " + " | ".join(row) + "\n"
    return text.rstrip("\n")


def check_wikitq_tables(data: Path) -> tuple[int, int]:
    """Check every WikiTQ table under ``data``; the number of tables and of odd headers."""
    paths = sorted((data / "wikitq" / "csv").glob("*/*.csv"))
    odd_headers = 0
    for path in paths:
        table = Table.from_csv(path)
        expected = wikitq_tsv_rows(path.with_suffix(".tsv"))
        # The release's TSV copies turn no-break spaces into spaces and collapse runs
        # of spaces; compare modulo exactly that.
        assert _spaces(table.to_records()) == _spaces(expected), path
        header, *rows = table.to_records()
        odd_headers += len(set(header)) != len(header) or "" in header
        assert len(set(table.columns)) == len(table.columns)
        if all("\n" not in c and "|" not in c and "\\" not in c for r in expected for c in r):
            names_equal = table.columns == header
            if names_equal:
                assert table.to_pipe(caption=False) == reference_pipe(header, rows, None), path
        assert Table.from_pipe(table.to_pipe(escape=True), escaped=True).equals(table), path
    return len(paths), odd_headers


def check_tabfact_tables(data: Path) -> int:
    """Check every TabFact table under ``data``; the number of tables."""
    seen: dict[str, dict] = {}
    with open(data / "tabfact" / "test.jsonl", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            seen.setdefault(record["table_id"], record)
    for record in seen.values():
        header, *rows = record["table_text"]
        table = Table.from_records(header, rows, caption=record["table_caption"])
        assert table.to_records() == record["table_text"]
        assert table.to_pipe() == reference_pipe(header, rows, record["table_caption"])
        assert table.to_pipe(max_rows=3, caption=False) == reference_pipe(header, rows[:3], None)
    return len(seen)


def test_wikitq_fixture_tables(fixture_data: Path) -> None:
    tables, odd_headers = check_wikitq_tables(fixture_data)
    assert tables > 0
    assert odd_headers >= 4  # the fixtures keep the smallest tables with odd headers


def test_every_wikitq_table(full_data: Path) -> None:
    tables, odd_headers = check_wikitq_tables(full_data)
    assert tables == 371
    assert odd_headers >= 20  # the sample has duplicate and empty headers


def test_tabfact_fixture_tables(fixture_data: Path) -> None:
    assert check_tabfact_tables(fixture_data) > 0


def test_every_tabfact_table(full_data: Path) -> None:
    assert check_tabfact_tables(full_data) == 179


@pytest.mark.parametrize("name", ["203-csv/668", "204-csv/691"])
def test_wikitq_csv_with_caption_and_operations(fixture_data: Path, name: str) -> None:
    path = fixture_data / "wikitq" / "csv" / f"{name}.csv"
    page = json.loads(
        (fixture_data / "wikitq" / "page" / f"{name.replace('csv', 'page')}.json").read_text()
    )
    table = Table.from_csv(path, caption=page["title"])
    assert table.to_pipe().startswith(f"table caption : {page['title']}\ncol : ")
    first = table.columns[0]
    grouped = table.group_by(first)
    assert sum(int(r[1]) for r in grouped.rows()) == table.num_rows
