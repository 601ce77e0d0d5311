"""Reading typed sources: Parquet and Arrow files, Arrow data, DuckDB and SQLite tables.

These sources know their columns' types; each column's type is declared from the
source's (:func:`~tablereason.table.types.from_duckdb_type`) and every value is
written as text by DuckDB's cast to ``VARCHAR`` (``NULL`` as an empty cell), so a large
source is never held whole in Python, as with CSV:

- Arrow data (and Arrow IPC files, read by pyarrow) is scanned by the table database
  itself, in slices of Arrow batches (:mod:`tablereason.table.io.slices`): no second
  database and no Python string per cell.
- A Parquet file is read by a DuckDB connection of its own, since the database the
  tables live in reads no files (docs/table.md): it counts the rows from the file's
  footer (``parquet_file_metadata``), then hands the table database one slice of rows
  at a time (``file_row_number`` ranges, cast to text) through the Arrow C stream
  interface. A file with a column named ``file_row_number`` (which hides DuckDB's row
  number), and a small file, are read as a DuckDB table is.
- A DuckDB table is read by its own connection too, in chunks of :data:`CHUNK_CELLS`
  cells fetched into Python and appended to the table's storage.

SQLite database files are read with Python's ``sqlite3`` (DuckDB's SQLite extension is
a download, and downloads are not part of loading a table), streamed row by row; SQLite
does not enforce column types, so their types are inferred from the text as for CSV.

Example:
    >>> import duckdb, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> _ = duckdb.sql("COPY (SELECT 1 AS n, NULL::DATE AS d, 'x' AS s) TO '" + path + "'")
    >>> t = read_parquet(Path(path), None)
    >>> t.to_records(), t.types
    ([['n', 'd', 's'], ['1', '', 'x']], {'n': 'integer', 'd': 'date', 's': 'text'})
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
from sqlglot import exp

from tablereason.errors import MissingDependencyError, TableParseError
from tablereason.table.io import MAX_COLUMNS
from tablereason.table.io.slices import (
    arrow_slices,
    as_text,
    batch_reader,
    drained,
    load_slices,
    slice_rows,
)
from tablereason.table.kernel import over_base
from tablereason.table.storage import RID, SMALL_CELLS, Store, ident, render, table_ref, to_text
from tablereason.table.types import declare_types, from_duckdb_type
from tablereason.table.value import Table

CHUNK_CELLS = 32_768
"""Cells of a DuckDB table fetched into Python per chunk (at least one vector of 2,048
rows): its reader is a second DuckDB database beside the one the table is stored in, so
the chunk in flight is kept small (docs/benchmarks/typed_columns.md)."""
_VECTOR = 2048
_READER_MEMORY = "256MiB"
_ROW_NUMBER = "file_row_number"  # DuckDB's row number of a Parquet file's row


def _reader(database: str = ":memory:") -> Any:
    """A DuckDB connection for reading one source: one thread, bounded memory, no downloads.

    A database file is opened read-only. Freed memory goes back to the system soon (at
    DuckDB's defaults, reading a 1,000,000-row Parquet file peaked 8 MB higher).
    """
    import duckdb

    return duckdb.connect(
        database,
        read_only=database != ":memory:",
        config={
            "threads": 1,
            "memory_limit": _READER_MEMORY,
            "allocator_flush_threshold": "1MB",
            "allocator_bulk_deallocation_flush_threshold": "1MB",
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        },
    )


def read_parquet(path: Path, caption: str | None) -> Table:
    """Read a Parquet file with its column types (a large one in slices, see above)."""
    import duckdb

    what = str(path)
    source = exp.func("read_parquet", exp.Literal.string(str(path)))
    with closing(_reader()) as conn:
        try:
            labels, kinds = _schema(conn, source, what)
            rows = _parquet_rows(conn, path, labels)
            if rows is None or rows * len(labels) <= SMALL_CELLS:
                return _read_relation(conn, source, caption, what)
            table = load_slices(labels, _parquet_slices(conn, source, labels, rows), caption)
        except duckdb.Error as err:
            raise _unreadable(what, err) from err
    declare_types(table, dict(zip(table.columns, kinds, strict=True)))
    return table


def _parquet_rows(conn: Any, path: Path, labels: Sequence[str]) -> int | None:
    """The rows of a Parquet file, counted from its footer.

    ``None`` where slices of its row numbers cannot be read: several files matched the
    path, or a column of the file hides DuckDB's row number.
    """
    if any(label.casefold() == _ROW_NUMBER for label in labels):
        return None
    footer = exp.func("parquet_file_metadata", exp.Literal.string(str(path)))
    count = exp.select(
        exp.func("count", exp.Star()), exp.func("sum", exp.column("num_rows"))
    ).from_(footer)
    files, rows = conn.execute(render(count)).fetchall()[0]
    return int(rows or 0) if files == 1 else None


class _Slice:
    """One slice of a query on the reader, streamed to whoever scans it as Arrow."""

    def __init__(self, conn: Any, query: exp.Expr) -> None:
        self._relation = conn.sql(render(query))

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> Any:
        return self._relation.__arrow_c_stream__(requested_schema)


def _parquet_slices(
    conn: Any, source: exp.Expr, labels: Sequence[str], rows: int
) -> Iterator[_Slice]:
    """Slices of a Parquet file's rows, as text, by ranges of DuckDB's row number."""
    number = exp.column(ident(_ROW_NUMBER))
    fields = [exp.alias_(exp.cast(number, exp.DataType.build("BIGINT")), ident(RID))] + [
        as_text(exp.column(ident(label)), f"c{i}") for i, label in enumerate(labels)
    ]
    step = slice_rows(len(labels))
    for start in range(0, rows, step):
        within = exp.and_(
            exp.GTE(this=number.copy(), expression=exp.Literal.number(start)),
            exp.LT(this=number.copy(), expression=exp.Literal.number(start + step)),
        )
        yield _Slice(conn, exp.select(*fields).from_(source).where(within))


def read_arrow_file(path: Path, caption: str | None) -> Table:
    """Read an Arrow IPC file or stream (Feather version 2) with its column types.

    Raises:
        MissingDependencyError: Without ``pyarrow``.
    """
    try:
        import pyarrow.ipc as ipc
    except ImportError as err:
        raise MissingDependencyError(
            "reading Arrow files needs pyarrow: pip install pyarrow (or save the table as Parquet)"
        ) from err
    try:
        reader = ipc.open_file(str(path))
        batches: Any = reader.to_reader() if hasattr(reader, "to_reader") else reader.read_all()
    except Exception:  # not the file format: try the stream format
        try:
            batches = ipc.open_stream(str(path))
        except Exception as err:
            raise TableParseError(
                f"{path}: not an Arrow IPC file or stream ({str(err).splitlines()[0][:200]})"
            ) from err
    return read_arrow_data(batches, caption, str(path))


def read_arrow_data(data: Any, caption: str | None, what: str = "the Arrow data") -> Table:
    """Read Arrow data, scanned by the table database in slices.

    A pyarrow table, record batch, record batch reader or dataset, an object with
    ``__arrow_c_stream__``, or a frame with ``to_arrow()`` (polars), which is converted.

    Raises:
        MissingDependencyError: Without ``pyarrow``.
        TableParseError: When DuckDB cannot read the data.
    """
    import duckdb

    if not _is_arrow(data) and hasattr(data, "to_arrow"):
        data = data.to_arrow()
    reader = batch_reader(data, what)
    import pyarrow as pa

    labels = [str(name) for name in reader.schema.names]
    _check_width(labels, what)
    slices = arrow_slices(reader, slice_rows(len(labels)))
    store = Store()
    try:
        held = [next(slices)]  # with no rows, an empty slice: the schema's types still count
        if held[0].num_rows * len(labels) <= SMALL_CELLS:
            held += itertools.islice(slices, 1)
        small = len(held) == 1 and held[0].num_rows * len(labels) <= SMALL_CELLS
        with store.registered(held[0]) as name, store.connection() as conn:
            everything = exp.select(exp.Star()).from_(table_ref(name)).limit(0)
            schema = conn.execute(render(everything)).description or []
            kinds = [from_duckdb_type(str(row[1])) for row in schema[1:]]  # after __rid
            texts = [as_text(exp.column(ident(f"c{i}")), f"c{i}") for i in range(len(labels))]
            cells = store.fetch(exp.select(*texts).from_(table_ref(name))) if small else []
        if small:
            table = Table.from_records(labels, [list(row) for row in cells], caption)
        else:
            table = load_slices(labels, drained(held, slices), caption)
    except (duckdb.Error, pa.ArrowException) as err:
        raise _unreadable(what, err) from err
    declare_types(table, dict(zip(table.columns, kinds, strict=True)))
    return table


def read_database(path: Path, table: str | None, caption: str | None) -> Table:
    """Read one table of a DuckDB or SQLite database file (chosen by the file's header).

    Args:
        path: The database file.
        table: The table's name; may be left out when the database holds one table.
        caption: Caption of the table.

    Raises:
        TableParseError: Naming the tables there are, for a missing or unknown ``table``.
    """
    with path.open("rb") as handle:
        header = handle.read(16)
    if header.startswith(b"SQLite format 3"):
        return _read_sqlite(path, table, caption)
    import duckdb

    try:
        conn = _reader(str(path))
    except duckdb.Error as err:
        raise TableParseError(
            f"{path}: not a DuckDB or SQLite database ({str(err).splitlines()[0][:200]})"
        ) from err
    with closing(conn):
        names = [r[0] for r in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        names += [
            r[0]
            for r in conn.execute(
                "SELECT view_name FROM duckdb_views() WHERE NOT internal"
            ).fetchall()
        ]
        chosen = _choose(path, table, names)
        return _read_relation(conn, table_ref(chosen), caption or None, f"{path} ({chosen})")


def _choose(path: Path, table: str | None, names: Sequence[str]) -> str:
    listed = ", ".join(repr(n) for n in names) or "none"
    if table is None:
        if len(names) == 1:
            return names[0]
        raise TableParseError(
            f"{path}: holds {len(names)} tables ({listed}); name one (table='...', or "
            "--table NAME on the command line)"
        )
    if table in names:
        return table
    folded = [n for n in names if n.casefold() == table.casefold()]
    if len(folded) == 1:
        return folded[0]
    raise TableParseError(f"{path}: has no table {table!r}; its tables: {listed}")


def _schema(conn: Any, source: exp.Expr, what: str) -> tuple[list[str], list[str]]:
    """The column names of ``source`` on the reader, and their types."""
    everything = exp.select(exp.Star()).from_(source)
    schema = conn.execute(render(everything.limit(0))).description or []
    labels = [str(row[0]) for row in schema]
    _check_width(labels, what)
    return labels, [from_duckdb_type(str(row[1])) for row in schema]


def _check_width(labels: Sequence[str], what: str) -> None:
    if len(labels) > MAX_COLUMNS:
        raise TableParseError(f"{what}: {len(labels)} columns, more than {MAX_COLUMNS}")
    if not labels:
        raise TableParseError(f"{what}: the table has no columns")


def _unreadable(what: str, err: Exception) -> TableParseError:
    return TableParseError(f"{what}: cannot be read ({str(err).splitlines()[0][:300]})")


def _read_relation(conn: Any, source: exp.Expr, caption: str | None, what: str) -> Table:
    """Stream every row of ``source`` (a table, view or table function) into a table.

    Rows are fetched into Python in chunks of :data:`CHUNK_CELLS` cells.
    """
    import duckdb

    try:
        labels, kinds = _schema(conn, source, what)
        texts = [as_text(exp.column(ident(label)), f"c{i}") for i, label in enumerate(labels)]
        result = conn.execute(render(exp.select(*texts).from_(source)))
        table = from_column_chunks(labels, _frames(result, len(labels)), caption)
    except duckdb.Error as err:
        raise _unreadable(what, err) from err
    declare_types(table, dict(zip(table.columns, kinds, strict=True)))
    return table


def _frames(result: Any, width: int) -> Iterator[Sequence[Sequence[str]]]:
    """A query's result in chunks of about :data:`CHUNK_CELLS` cells, one array per column."""
    vectors = max(1, CHUNK_CELLS // (_VECTOR * width))
    while True:
        frame = result.fetch_df_chunk(vectors)
        if not len(frame):
            return
        yield [frame.iloc[:, i].to_numpy(dtype=object) for i in range(width)]


def from_column_chunks(
    labels: list[str], chunks: Iterator[Sequence[Sequence[str]]], caption: str | None
) -> Table:
    """A table from chunks of text columns (each chunk one sequence per column).

    A table of at most :data:`~tablereason.table.storage.SMALL_CELLS` cells is built
    in Python as :meth:`Table.from_records` builds one; a larger one is appended to its
    storage chunk by chunk.
    """
    held: list[Sequence[Sequence[str]]] = []
    n = 0
    iterator = iter(chunks)
    for chunk in iterator:
        held.append(chunk)
        n += len(chunk[0]) if chunk else 0
        if n * len(labels) > SMALL_CELLS:
            break
    else:
        return _small(labels, held, caption)
    store = Store()
    base = store.create_base(len(labels))
    n = 0
    for chunk in itertools.chain(held, iterator):
        rows = len(chunk[0])
        store.append(base, np.arange(n, n + rows, dtype=np.int64), chunk)
        n += rows
    held.clear()
    return over_base(Table, store, base, list(labels), n, caption)


def _small(labels: list[str], chunks: list[Sequence[Sequence[str]]], caption: str | None) -> Table:
    rows = [list(row) for chunk in chunks for row in zip(*chunk, strict=True)]
    return Table.from_records(labels, rows, caption)


def _read_sqlite(path: Path, table: str | None, caption: str | None) -> Table:
    """One table of a SQLite file, streamed row by row (types inferred from the text)."""
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as err:
        raise TableParseError(f"{path}: cannot be opened as SQLite ({err})") from err
    with closing(conn):
        try:
            names = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name"
                )
            ]
            chosen = _choose(path, table, names)
            quoted = render(exp.select(exp.Star()).from_(table_ref(chosen)))
            cursor = conn.execute(quoted)
        except sqlite3.Error as err:
            raise TableParseError(f"{path}: cannot be read as SQLite ({err})") from err
        labels = [str(d[0]) for d in cursor.description or []]
        if not labels:
            raise TableParseError(f"{path} ({chosen}): the table has no columns")
        per_chunk = max(1, CHUNK_CELLS // len(labels))

        def chunks() -> Iterator[list[list[str]]]:
            while batch := cursor.fetchmany(per_chunk):
                yield [[_sqlite_text(row[i]) for row in batch] for i in range(len(labels))]

        return from_column_chunks(labels, chunks(), caption)


def _sqlite_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.hex()
    return to_text(value)


def _is_arrow(data: Any) -> bool:
    module = type(data).__module__ or ""
    return module.startswith("pyarrow")
