"""Reading typed sources: Parquet and Arrow files, Arrow data, DuckDB and SQLite tables.

These sources know their columns' types. Each is read by a DuckDB connection of its
own (not the locked database the tables live in, which reads no files), in chunks of
rows: every value is written as text by DuckDB's cast to ``VARCHAR`` (``NULL`` as an
empty cell) and appended to the table's storage chunk by chunk, and each column's type
is declared from the source's (:func:`~tablereason.table.types.from_duckdb_type`). So
a large file is never held whole in Python, as with CSV.

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
from tablereason.table.kernel import over_base
from tablereason.table.storage import SMALL_CELLS, Store, ident, render, table_ref, to_text
from tablereason.table.types import declare_types, from_duckdb_type
from tablereason.table.value import Table

CHUNK_CELLS = 32_768
"""Cells read from a typed source per chunk (at least one vector of 2,048 rows).

Smaller than a text file's chunk: the source's reader is a second DuckDB database (about
25 MB at connect) beside the one the table is stored in, so the chunk in flight is kept
small (docs/benchmarks/typed_columns.md: at 100,000 cells a 1,000,000-row Parquet file
peaked at 1.36x the same table read from CSV)."""
_VECTOR = 2048
_READER_MEMORY = "256MiB"


def _reader(database: str = ":memory:") -> Any:
    """A DuckDB connection for reading one source: one thread, bounded memory, no downloads.

    A database file is opened read-only.
    """
    import duckdb

    return duckdb.connect(
        database,
        read_only=database != ":memory:",
        config={
            "threads": 1,
            "memory_limit": _READER_MEMORY,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        },
    )


def read_parquet(path: Path, caption: str | None) -> Table:
    """Read a Parquet file with its column types."""
    source = exp.func("read_parquet", exp.Literal.string(str(path)))
    with closing(_reader()) as conn:
        return _read_relation(conn, source, caption, str(path))


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
    """Read Arrow data (a pyarrow table, record batch reader, or a polars frame).

    Anything DuckDB can scan as Arrow works; a frame with ``to_arrow()`` is converted.
    """
    if not _is_arrow(data) and hasattr(data, "to_arrow"):
        data = data.to_arrow()
    with closing(_reader()) as conn:
        conn.register("__source", data)
        return _read_relation(conn, table_ref("__source"), caption, what)


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


def _read_relation(conn: Any, source: exp.Expr, caption: str | None, what: str) -> Table:
    """Stream every row of ``source`` (a table, view or table function) into a table."""
    import duckdb

    try:
        everything = exp.select(exp.Star()).from_(source)
        schema = conn.execute(render(everything.limit(0))).description or []
        labels = [str(row[0]) for row in schema]
        kinds = [from_duckdb_type(str(row[1])) for row in schema]
        if len(labels) > MAX_COLUMNS:
            raise TableParseError(f"{what}: {len(labels)} columns, more than {MAX_COLUMNS}")
        if not labels:
            raise TableParseError(f"{what}: the table has no columns")
        texts = [
            exp.alias_(
                exp.func(
                    "coalesce",
                    exp.cast(exp.column(ident(label)), exp.DataType.build("VARCHAR")),
                    exp.Literal.string(""),
                ),
                ident(f"c{i}"),
            )
            for i, label in enumerate(labels)
        ]
        result = conn.execute(render(exp.select(*texts).from_(source)))
        table = from_column_chunks(labels, _frames(result, len(labels)), caption)
    except duckdb.Error as err:
        raise TableParseError(f"{what}: cannot be read ({str(err).splitlines()[0][:300]})") from err
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
