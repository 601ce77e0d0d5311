"""Typed sources: Parquet and Arrow files, Arrow data, DuckDB and SQLite tables, from Python
and the command line, small and past ``SMALL_CELLS`` (streamed in chunks)."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

import duckdb
import pytest

from tablereason.api import load_table
from tablereason.cli.ask_command import read_table
from tablereason.errors import ConfigurationError, TableError, TableParseError
from tablereason.table.storage import SMALL_CELLS

pa = pytest.importorskip("pyarrow")  # declared in the dev extra: installed wherever tests run
feather = pytest.importorskip("pyarrow.feather")

FLIGHTS = """
SELECT range AS id,
       CASE WHEN range % 5 = 1 THEN NULL ELSE range * 1.5 END AS delay,
       CASE WHEN range % 4 = 2 THEN NULL ELSE 'N' || (range % 9) END AS tailnum,
       DATE '2013-01-01' + (range % 365)::INTEGER AS day,
       range % 2 = 0 AS even,
       TIMESTAMP '2013-01-01 05:00:00' + to_minutes(range::BIGINT) AS at
FROM range({n})
"""
TYPES = {
    "id": "integer",
    "delay": "decimal",
    "tailnum": "text",
    "day": "date",
    "even": "boolean",
    "at": "timestamp",
}
LARGE = SMALL_CELLS // len(TYPES) + 3000


def _write(path: Path, n: int, fmt: str, source: str = FLIGHTS) -> Path:
    """The rows of ``source`` (a query over ``range({n})``) as a Parquet, DuckDB (tables
    ``flights`` and ``airlines``) or Arrow file."""
    with duckdb.connect() as conn:
        if fmt == "parquet":
            conn.execute(f"COPY ({source.format(n=n)}) TO '{path}' (FORMAT parquet)")
        elif fmt == "duckdb":
            with duckdb.connect(str(path)) as db:
                db.execute(f"CREATE TABLE flights AS {source.format(n=n)}")
                db.execute("CREATE TABLE airlines AS SELECT 'UA' AS carrier")
        else:
            table = conn.sql(source.format(n=n)).to_arrow_table()
            feather.write_feather(table, str(path))
    return path


@pytest.mark.parametrize("n", [40, LARGE], ids=["small", "large"])
@pytest.mark.parametrize("fmt", ["parquet", "arrow", "duckdb"])
def test_typed_files_keep_types_nulls_and_text(tmp_path: Path, fmt: str, n: int) -> None:
    suffix = {"parquet": ".parquet", "arrow": ".feather", "duckdb": ".duckdb"}[fmt]
    path = _write(tmp_path / f"flights{suffix}", n, fmt)
    table = load_table(path, table="flights" if fmt == "duckdb" else None)
    assert table.num_rows == n and table.kernel.is_small() == (n == 40)
    assert table.types == TYPES
    assert table.rows(3) == [
        ["0", "0.0", "N0", "2013-01-01", "true", "2013-01-01 05:00:00"],
        ["1", "", "N1", "2013-01-02", "false", "2013-01-01 05:01:00"],
        ["2", "3.0", "", "2013-01-03", "true", "2013-01-01 05:02:00"],
    ]
    with duckdb.connect() as conn:
        gold = conn.execute(
            f"SELECT count(*) FILTER (WHERE tailnum IS NULL), count(delay), "
            f"max(delay), count(*) FILTER (WHERE even) FROM ({FLIGHTS.format(n=n)})"
        ).fetchone()
    got = table.sql(
        "SELECT count(*) FILTER (WHERE tailnum IS NULL), count(delay), max(delay), "
        "count(*) FILTER (WHERE even) FROM t"
    ).rows()
    assert got == [[str(gold[0]), str(gold[1]), str(gold[2]), str(gold[3])]]
    nulls = table.apply("filter_rows", condition="tailnum IS NULL").num_rows
    assert nulls == gold[0]


def test_arrow_streams_and_tables(tmp_path: Path) -> None:
    data = pa.table({"a": [1, None, 3], "b": ["x", "y", None]})
    assert load_table(data).types == {"a": "integer", "b": "text"}
    assert load_table(data).rows() == [["1", "x"], ["", "y"], ["3", ""]]
    stream = tmp_path / "t.arrows"
    with pa.OSFile(str(stream), "wb") as sink, pa.ipc.new_stream(sink, data.schema) as writer:
        writer.write_table(data)
    assert load_table(stream).rows() == [["1", "x"], ["", "y"], ["3", ""]]


def test_sqlite_tables(tmp_path: Path) -> None:
    path = tmp_path / "sales.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER, price REAL, who TEXT, day TEXT)")
        conn.execute('CREATE TABLE "odd ""name""" (x)')
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?, ?, ?)",
            [(i, None if i % 3 == 0 else i / 4, None if i % 5 == 0 else f"c{i}", "2013-01-02")
             for i in range(LARGE)],
        )  # fmt: skip
    orders = load_table(path, table="orders")
    assert orders.num_rows == LARGE and not orders.kernel.is_small()
    assert orders.types == {"id": "integer", "price": "decimal", "who": "text", "day": "date"}
    assert orders.sql("SELECT count(*) - count(price), count(*) - count(who) FROM t").rows() == [
        [str(len(range(0, LARGE, 3))), str(len(range(0, LARGE, 5)))]
    ]
    assert load_table(path, table='odd "name"').columns == ["x"]
    with pytest.raises(
        TableParseError, match="has no table 'nope'; its tables: 'odd \"name\"', 'orders'"
    ):
        load_table(path, table="nope")
    with pytest.raises(TableParseError, match="holds 2 tables"):
        load_table(path)


def test_database_errors(tmp_path: Path) -> None:
    path = _write(tmp_path / "flights.duckdb", 10, "duckdb")
    with pytest.raises(TableParseError, match="'airlines', 'flights'"):
        load_table(path)
    assert load_table(path, table="AIRLINES").rows() == [["UA"]]  # case-insensitive
    csv = tmp_path / "a.csv"
    csv.write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="for a database file"):
        load_table(csv, table="x")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(TableParseError, match=r"broken\.parquet"):
        load_table(broken)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"\x00" * 64)
    with pytest.raises(TableParseError, match=r"junk\.db"):
        load_table(junk)


def test_types_override_at_load(tmp_path: Path) -> None:
    csv = tmp_path / "z.csv"
    csv.write_text("zip,n\n02139,1\n10001,\n", encoding="utf-8")
    assert load_table(csv).types == {"zip": "integer", "n": "integer"}
    assert load_table(csv, types={"zip": "text"}).types == {"zip": "text", "n": "integer"}
    assert load_table(csv, types="text").types == {"zip": "text", "n": "text"}
    with pytest.raises(TableError, match="unknown column type 'number'"):
        load_table(csv, types={"zip": "number"})
    table = load_table(csv)
    with pytest.raises(ConfigurationError, match="already has its types"):
        load_table(table, types="text")


def _args(table: str | None, **extra: object) -> argparse.Namespace:
    defaults = {"caption": None, "delimiter": None, "format": None, "tables": None,
                "types": None, "all_text": False}  # fmt: skip
    return argparse.Namespace(table=table, **{**defaults, **extra})


def test_the_command_line_reads_typed_sources(tmp_path: Path) -> None:
    db = _write(tmp_path / "flights.duckdb", 10, "duckdb")
    assert read_table(_args(str(db), tables=["flights"])).num_rows == 10
    parquet = _write(tmp_path / "f.parquet", 10, "parquet")
    assert read_table(_args(str(parquet))).types == TYPES
    typed = read_table(_args(str(parquet), types=["id=text", "delay=text"]))
    assert typed.types == {**TYPES, "id": "text", "delay": "text"}
    assert set(read_table(_args(str(parquet), all_text=True)).types.values()) == {"text"}
    both = read_table(_args(None, tables=[f"f={parquet}", f"g={parquet}"]))
    assert isinstance(both, dict) and sorted(both) == ["f", "g"]
    with pytest.raises(ConfigurationError, match="--all-text or --type"):
        read_table(_args(str(parquet), all_text=True, types=["id=text"]))
    with pytest.raises(ConfigurationError, match="COLUMN=TYPE"):
        read_table(_args(str(parquet), types=["id"]))
    with pytest.raises(ConfigurationError, match="NAME=PATH"):
        read_table(_args(str(parquet), tables=[f"f={parquet}"]))
    with pytest.raises(SystemExit):  # one word: the path, or the question, is missing
        read_table(_args(None))


@pytest.mark.parametrize("width", [1, 3, 6, 16])
@pytest.mark.parametrize("fmt", ["parquet", "arrow", "duckdb"])
def test_typed_sources_move_bounded_slices_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, width: int
) -> None:
    """Parquet and Arrow reach the table's storage as Arrow slices, one statement each,
    of at most ``slice_rows(width)`` rows and never through Python chunks; a DuckDB table
    is fetched into Python in chunks of at most 32,768 cells (or one 2,048-row vector of a
    wider row). Either way the rows arrive whole and in order."""
    from tablereason.table.io import slices
    from tablereason.table.storage import Store

    monkeypatch.setattr(slices, "MAX_SLICE_ROWS", 8192)  # several slices of 40,000 rows
    monkeypatch.setattr(slices, "SLICE_CELLS", 20_000)
    n = 40_000
    columns = ", ".join(f"range * {i + 1} AS c{i}" for i in range(width))
    path = _write(tmp_path / f"wide.{fmt}", n, fmt, f"SELECT {columns} FROM range({{n}})")
    chunks: list[tuple[int, int]] = []
    moved: list[int] = []
    append, append_query = Store.append, Store.append_query

    def spy(self: Store, name: str, rids: object, cols: list[list[str]]) -> None:
        chunks.append((len(cols[0]), len(cols)))
        append(self, name, rids, cols)  # type: ignore[arg-type]

    def count(store: Store, name: str) -> int:
        return int(store.fetch(duckdb_count(name))[0][0])

    def spy_query(self: Store, name: str, select: object) -> None:
        before = count(self, name)
        append_query(self, name, select)  # type: ignore[arg-type]
        moved.append(count(self, name) - before)

    monkeypatch.setattr(Store, "append", spy)
    monkeypatch.setattr(Store, "append_query", spy_query)
    table = load_table(path, table="flights" if fmt == "duckdb" else None)
    if fmt == "duckdb":
        assert chunks and not moved
        assert all(rows * cols <= max(32_768, 2048 * width) for rows, cols in chunks)
        assert sum(rows for rows, _ in chunks) == n
    else:
        step = slices.slice_rows(width)
        assert step == max(2048, min(8192, 20_000 // width))
        assert not chunks and len(moved) == -(-n // step)
        assert all(rows == step for rows in moved[:-1]) and sum(moved) == n
    assert table.num_rows == n
    in_order = table.sql(f"SELECT count(*) FROM t WHERE c{width - 1} <> (c0 * {width})").rows()
    assert in_order == [["0"]]
    assert table.rows(1) == [["0"] * width]
    last = table.sql(f"SELECT c{width - 1} FROM t ORDER BY c0 DESC LIMIT 1").rows()
    assert last == [[str((n - 1) * width)]]
    assert table.rows()[-1] == [str((n - 1) * (i + 1)) for i in range(width)]


def duckdb_count(name: str) -> object:
    from sqlglot import exp

    from tablereason.table.storage import table_ref

    return exp.select(exp.func("count", exp.Star())).from_(table_ref(name))
