"""Moving typed rows into the table's storage in slices of Arrow data, no Python object per cell.

A large Parquet file or large Arrow data reaches the table database as Arrow slices
of at most :func:`slice_rows` rows, each appended by one statement of the table
database (``INSERT ... SELECT`` over the slice, registered as a temporary relation):
the cells never become Python strings, and each statement commits its rows before
the next slice is read, so the table database compresses as it goes, as with CSV. A
slice carries the row id ``__rid`` and the columns ``c0, c1, ...``; each cell is
written as text by DuckDB's cast to ``VARCHAR`` (``NULL`` as an empty cell), in the
table database for Arrow data or already in the reader for a Parquet file (where the
cast of a ``VARCHAR`` is then a no-op), so the text is what the rest of
:mod:`tablereason.table.io.columnar` writes.

Example:
    >>> import pyarrow as pa
    >>> t = load_slices(["n"], arrow_slices(pa.table({"n": [1, None] * 6000}).to_reader(), 8192),
    ...                 None)
    >>> t.num_rows, t.rows(2)
    (12000, [['1'], ['']])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from sqlglot import exp

from tablereason.errors import MissingDependencyError, TableParseError
from tablereason.table.kernel import over_base
from tablereason.table.storage import RID, Store, ident, table_ref
from tablereason.table.value import Table

SLICE_CELLS = 458_752
"""Cells per slice: 65,536 rows of the 7 columns of the benchmark's orders table."""
MAX_SLICE_ROWS = 65_536
"""Rows per slice at most: half a DuckDB row group (122,880 rows). With slices of
131,072 rows the last statement of a 1,000,000-row load raised the table database's
memory by 80 MB (docs/benchmarks/typed_columns.md)."""
VECTOR = 2048
"""Rows per slice at least (one DuckDB vector), however wide the table."""


def slice_rows(width: int) -> int:
    """Rows per slice of a table of ``width`` columns.

    Example:
        >>> slice_rows(7), slice_rows(1), slice_rows(1000)
        (65536, 65536, 2048)
    """
    return max(VECTOR, min(MAX_SLICE_ROWS, SLICE_CELLS // max(1, width)))


def as_text(column: exp.Expr, alias: str) -> exp.Expr:
    """``coalesce(CAST(column AS VARCHAR), '') AS alias``: a cell as the table stores it."""
    return exp.alias_(
        exp.func(
            "coalesce",
            exp.cast(column, exp.DataType.build("VARCHAR")),
            exp.Literal.string(""),
        ),
        ident(alias),
    )


def load_slices(labels: list[str], slices: Iterator[Any], caption: str | None) -> Table:
    """A table of the rows of ``slices``, appended to a new storage table one by one.

    Args:
        labels: The column names.
        slices: Arrow data DuckDB scans (pyarrow tables, or objects with
            ``__arrow_c_stream__``), each with ``__rid`` and ``c0, c1, ...`` fields.
        caption: Caption of the table.
    """
    store = Store()
    base = store.create_base(len(labels))
    fields = [exp.column(ident(RID))] + [
        as_text(exp.column(ident(f"c{i}")), f"c{i}") for i in range(len(labels))
    ]
    for data in slices:
        with store.registered(data) as name:
            store.append_query(base, exp.select(*fields).from_(table_ref(name)))
    counted = store.fetch(exp.select(exp.func("count", exp.Star())).from_(table_ref(base)))
    return over_base(Table, store, base, list(labels), int(counted[0][0]), caption)


def arrow_slices(reader: Any, rows: int) -> Iterator[Any]:
    """The batches of a pyarrow ``RecordBatchReader`` as tables of ``rows`` rows.

    The last may be shorter, and there is one empty table when there are no rows. Each
    has a ``__rid`` field first and the columns renamed ``c0, c1, ...``; batches are cut
    and joined without copying their cells.
    """
    import pyarrow as pa

    held: list[Any] = []
    count = start = 0
    for batch in reader:
        while batch.num_rows:
            taken = batch.slice(0, rows - count)
            held.append(taken)
            count += taken.num_rows
            batch = batch.slice(taken.num_rows)
            if count == rows:
                yield _numbered(pa.Table.from_batches(held, reader.schema), start)
                start, held, count = start + count, [], 0
    if count or not start:
        yield _numbered(pa.Table.from_batches(held, reader.schema), start)


def _numbered(table: Any, start: int) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    # Added in Arrow's memory, so the row ids a slice keeps are not a numpy array.
    rids = pc.add(pa.array(np.arange(table.num_rows, dtype=np.int64)), pa.scalar(start))
    names: Sequence[str] = [RID] + [f"c{i}" for i in range(table.num_columns)]
    return pa.Table.from_arrays([rids, *table.columns], names=list(names))


def drained(held: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
    """``held`` then ``rest``, letting go of each held slice as it is handed on."""
    while held:
        yield held.pop(0)
    yield from rest


def batch_reader(data: Any, what: str) -> Any:
    """Arrow data as a pyarrow ``RecordBatchReader``."""
    try:
        import pyarrow as pa
    except ImportError as err:
        raise MissingDependencyError(
            "reading Arrow data needs pyarrow: pip install pyarrow"
        ) from err
    if isinstance(data, pa.RecordBatchReader):
        return data
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        return data.to_reader()
    if hasattr(data, "scanner"):  # a pyarrow dataset
        return data.scanner().to_reader()
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data)
    raise TableParseError(f"{what}: not Arrow data DuckDB can read ({type(data).__name__})")
