"""Parquet files and Arrow data moved into the table's storage in Arrow slices: the same
table as from CSV, no Python string per cell, and a table database that still reads no
files after the load."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.api import load_table
from tablereason.table.io.slices import arrow_slices
from tablereason.table.storage import SMALL_CELLS

pa = pytest.importorskip("pyarrow")
feather = pytest.importorskip("pyarrow.feather")

EVERY_TYPE = """
SELECT CASE WHEN range % 7 = 3 THEN NULL ELSE range - 500 END AS n,
       CASE WHEN range % 5 = 1 THEN NULL ELSE range * 0.25 END AS x,
       CASE WHEN range % 6 = 2 THEN NULL ELSE DATE '2013-01-01' + (range % 900)::INTEGER END
           AS day,
       CASE WHEN range % 4 = 3 THEN NULL
            ELSE TIMESTAMP '2013-01-01 05:00:00' + to_minutes(range::BIGINT) END AS at,
       CASE WHEN range % 9 = 4 THEN NULL ELSE range % 2 = 0 END AS even,
       CASE WHEN range % 8 = 5 THEN NULL ELSE 'N' || (range % 13) END AS tail
FROM range({n})
"""
TYPES = {"n": "integer", "x": "decimal", "day": "date", "at": "timestamp",
         "even": "boolean", "tail": "text"}  # fmt: skip
LARGE = SMALL_CELLS // len(TYPES) + 70_000  # two slices and more


def _files(folder: Path, n: int) -> tuple[Path, Path, Path]:
    """The same rows as CSV (blank for NULL), as Parquet and as an Arrow file."""
    csv, parquet, arrow = folder / "t.csv", folder / "t.parquet", folder / "t.feather"
    query = EVERY_TYPE.format(n=n)
    with duckdb.connect() as conn:
        conn.execute(f"COPY ({query}) TO '{csv}' (HEADER, NULLSTR '')")
        conn.execute(f"COPY ({query}) TO '{parquet}' (FORMAT parquet)")
        feather.write_feather(conn.sql(query).to_arrow_table(), str(arrow))
    return csv, parquet, arrow


@pytest.mark.parametrize("n", [40, LARGE], ids=["small", "large"])
def test_parquet_and_arrow_loads_equal_the_csv_load(tmp_path: Path, n: int) -> None:
    csv, parquet, arrow = _files(tmp_path, n)
    from_csv = load_table(csv)
    assert from_csv.types == TYPES and from_csv.num_rows == n
    gold = from_csv.to_records()
    assert "" in {row[i] for row in gold[1:] for i in range(len(TYPES))}  # NULLs everywhere
    summary = (
        "SELECT sum(n), count(n), sum(x), min(day), max(at), count(*) FILTER (WHERE even), "
        "count(tail), count(*) FILTER (WHERE day IS NULL AND at IS NULL) FROM t"
    )
    for path in (parquet, arrow):
        table = load_table(path)
        assert table.types == from_csv.types, path
        assert table.to_records() == gold, path  # cell by cell, in order
        assert table.kernel.is_small() == from_csv.kernel.is_small() == (n == 40)
        assert table.sql(summary).rows() == from_csv.sql(summary).rows(), path
        condition = "n IS NULL AND tail IS NOT NULL"
        nulls = table.apply("filter_rows", condition=condition).to_records()
        assert nulls == from_csv.apply("filter_rows", condition=condition).to_records()


def test_the_table_database_reads_no_files_after_typed_loads(tmp_path: Path) -> None:
    """Loading Parquet and Arrow files leaves the table database as locked as before:
    no file, extension or setting can be reached from it."""
    from tablereason.table.database import database

    csv, parquet, arrow = _files(tmp_path, LARGE)
    for path in (parquet, arrow):
        assert load_table(path).num_rows == LARGE
    cursor = database().cursor()
    refused = [
        f"SELECT * FROM read_csv('{csv}')",
        f"SELECT * FROM read_parquet('{parquet}')",
        f"SELECT count(*) FROM parquet_file_metadata('{parquet}')",
        f"COPY (SELECT 1 AS a) TO '{tmp_path / 'out.csv'}'",
        f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
        "INSTALL httpfs",
        "LOAD httpfs",
    ]
    for statement in refused:
        with pytest.raises(duckdb.Error, match=r"(?i)disabled|permission|not allowed"):
            cursor.execute(statement).fetchall()
    for setting in ("enable_external_access = true", "lock_configuration = false"):
        with pytest.raises(duckdb.Error, match=r"(?i)lock|configuration|cannot"):
            cursor.execute(f"SET {setting}")
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.duckdb").exists()


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=40), max_size=12),
    rows=st.integers(min_value=1, max_value=25),
)
def test_arrow_slices_cut_and_join_batches_in_order(sizes: list[int], rows: int) -> None:
    schema = pa.schema([("v", pa.int64()), ("s", pa.string())])
    batches, start = [], 0
    for size in sizes:
        values = list(range(start, start + size))
        batches.append(pa.record_batch([values, [str(v) for v in values]], schema=schema))
        start += size
    reader = pa.RecordBatchReader.from_batches(schema, batches)
    slices = list(arrow_slices(reader, rows))
    assert [t.column_names for t in slices] == [["__rid", "c0", "c1"]] * len(slices)
    assert all(t.num_rows == rows for t in slices[:-1])
    assert 0 < slices[-1].num_rows <= rows or (start == 0 and len(slices) == 1)
    joined = pa.concat_tables(slices)
    assert joined.column("__rid").to_pylist() == list(range(start))
    assert joined.column("c0").to_pylist() == list(range(start))
    assert joined.column("c1").to_pylist() == [str(v) for v in range(start)]


def test_a_column_named_file_row_number_is_kept(tmp_path: Path) -> None:
    """Such a column hides DuckDB's row number of the file: it is read as a DuckDB table
    is (in Python chunks), keeping its own values."""
    path = tmp_path / "numbered.parquet"
    with duckdb.connect() as conn:
        conn.execute(
            f"COPY (SELECT range * 10 AS File_Row_Number, range % 3 AS k FROM range({LARGE})) "
            f"TO '{path}' (FORMAT parquet)"
        )
    table = load_table(path)
    assert table.columns == ["File_Row_Number", "k"] and table.num_rows == LARGE
    assert table.types == {"File_Row_Number": "integer", "k": "integer"}
    assert table.rows()[-1] == [str((LARGE - 1) * 10), str((LARGE - 1) % 3)]
