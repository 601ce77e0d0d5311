"""Files stream into a table: chunk boundaries change nothing, and Python never holds the file."""

from __future__ import annotations

import codecs
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tablereason.table.value as table_module
from tablereason.table import Table
from tablereason.table.io.load import load_table

cells = st.text(alphabet="ab ,1", max_size=3)


@settings(max_examples=60, deadline=None)
@given(
    header=st.lists(cells, min_size=1, max_size=3),
    body=st.lists(st.lists(cells, max_size=5), max_size=40),
    chunk_cells=st.integers(min_value=1, max_value=12),
)
def test_from_rows_equals_from_records_at_any_chunk_size(header, body, chunk_cells) -> None:
    expected = Table.from_records(header, [list(r) for r in body]).to_records()
    original = table_module._CHUNK_CELLS
    table_module._CHUNK_CELLS = chunk_cells
    try:
        streamed = Table.from_rows(iter([list(header), *(list(r) for r in body)]))
    finally:
        table_module._CHUNK_CELLS = original
    assert streamed.to_records() == expected


def _write_csv(path: Path, megabytes: float, encoding: str = "utf-8") -> int:
    line = '1985,Norway,"1,104",51,1155,12 March 1985,Stadium 17,new record\n'
    count = int(megabytes * 1e6) // len(line)
    with path.open("w", encoding=encoding, newline="") as handle:
        handle.write("Rank,Nation,Gold,Silver,Total,Date,Venue,Notes\n")
        for _ in range(count // 1000):
            handle.write(line * 1000)
    return count // 1000 * 1000


def _python_peak(path: Path) -> tuple[int, Table]:
    """Peak Python memory of loading ``path`` in chunks of 20,000 cells (about 2 MB)."""
    original = table_module._CHUNK_CELLS
    table_module._CHUNK_CELLS = 20_000
    tracemalloc.start()
    try:
        table = load_table(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        table_module._CHUNK_CELLS = original
    return peak, table


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252", "utf-16"])
def test_load_table_never_holds_the_file_in_python(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "big.csv"
    rows = _write_csv(path, 6, encoding if encoding != "cp1252" else "utf-8")
    if encoding == "cp1252":  # one byte that is not UTF-8 makes the whole file Windows-1252
        with path.open("ab") as handle:
            handle.write(b"1986,S\xe9n\xe9gal,1,1,2,1 May 1986,Dakar,\n")
        rows += 1
    peak, table = _python_peak(path)
    assert table.num_rows == rows
    size = path.stat().st_size
    # the old reader held the bytes and the decoded text (2x the file, more for cp1252)
    assert peak < 0.5 * size, (
        f"peak {peak / 1e6:.1f} MB of Python memory for a {size / 1e6:.1f} MB file"
    )


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_large_typed_files_hold_no_python_cells(tmp_path: Path, fmt: str) -> None:
    """Parquet and Arrow cells move to the table's storage as Arrow data, not as one
    Python string per cell: fetched into Python in chunks of 32,768 cells, this load
    peaked at 4.5 MB of Python memory; now a slice's row ids, under 1 MB, are the most
    Python holds (the table's storage is DuckDB's, which tracemalloc does not see)."""
    import duckdb

    feather = pytest.importorskip("pyarrow.feather")
    path = tmp_path / f"big.{fmt}"
    query = (
        "SELECT range AS n, 'N' || (range % 13) AS tail, DATE '2013-01-01' + "
        "(range % 900)::INTEGER AS day, range * 0.25 AS x, range % 2 = 0 AS even, "
        "CASE WHEN range % 7 = 3 THEN NULL ELSE range END AS gaps FROM range(200000)"
    )
    with duckdb.connect() as conn:
        if fmt == "parquet":
            conn.execute(f"COPY ({query}) TO '{path}' (FORMAT parquet)")
        else:
            feather.write_feather(conn.sql(query).to_arrow_table(), str(path))
    load_table(path)  # imports and first-use costs out of the way
    peak, table = _python_peak(path)
    assert table.num_rows == 200_000
    assert peak < 1_000_000, f"{peak:,} bytes of Python memory at the peak"


def test_json_lines_stream(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    record = json.dumps({"rank": "1", "nation": "Norway", "gold": "1,104", "notes": "x" * 40})
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(60):
            handle.write((record + "\n") * 1000)
    peak, table = _python_peak(path)
    assert table.num_rows == 60_000
    assert peak < 0.5 * path.stat().st_size


def test_excel_separator_line_with_streaming(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(table_module, "_CHUNK_CELLS", 4)
    path = tmp_path / "export.csv"
    body = "".join(f"r{i};{i},5\r\n" for i in range(10))
    path.write_bytes(codecs.BOM_UTF16_LE + f"sep=;\r\nname;value\r\n{body}".encode("utf-16-le"))
    table = load_table(path)
    assert table.labels == ["name", "value"]
    assert table.rows()[9] == ["r9", "9,5"] and table.num_rows == 10
