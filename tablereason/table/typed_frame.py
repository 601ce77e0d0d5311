"""A table as the SQL worker receives it: its text cells and the typed view over them.

Model-written SQL runs in a worker process that holds only the tables it was given
(:mod:`tablereason.sandbox.sql.engine`). A table goes there as text columns ``c0, c1,
...`` (what the model is shown) and a ``SELECT`` that reads each as its column type
(:mod:`tablereason.table.types`), so the query sees integers, decimals, dates and
``NULL`` for missing cells under the table's display names. :func:`table_key` says
when two tables hold the same cells, so a worker keeps one between queries.

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["n", "k"], [["1", "a"], ["", "b"]])
    >>> data = table_data(t, "t")
    >>> data["columns"], data["cells"]
    (['c0', 'c1'], [['1', ''], ['a', 'b']])
    >>> print(data["select"])  # doctest: +NORMALIZE_WHITESPACE
    SELECT TRY_CAST(NULLIF(REPLACE(TRIM("c0", ' '), ',', ''), '') AS BIGINT) AS "n",
    CASE WHEN TRIM("c1", ' ') = '' THEN NULL ELSE "c1" END AS "k" FROM "__cells_t"
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from tablereason.errors import SQLError
from tablereason.table.storage import ident, render, table_ref
from tablereason.table.types import column_types, typed_cell

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


def table_key(table: Table, row_column: str | None = None) -> str:
    """What identifies the cells and types of ``table`` (its storage, rows and types).

    ``row_column`` is the name of the row-number column :func:`table_data` adds, if any.
    """
    kernel = table.kernel
    digest = hashlib.blake2b(digest_size=16)
    types = column_types(table, table.columns)
    digest.update(
        repr(
            (kernel.base, [(c.name, c.source, c.field, types[c.name]) for c in kernel.refs])
        ).encode()
    )
    if kernel.row_order is not None:
        digest.update(kernel.row_order.tobytes())
    if row_column is not None:
        digest.update(row_column.encode())
    return digest.hexdigest()


def table_data(table: Table, name: str, row_column: str | None = None) -> dict[str, Any]:
    """The table's text columns (``columns``, ``cells``) and the typed ``select`` over them.

    ``select`` reads the text from the relation named ``source`` (``__cells_<name>``)
    and names each column as the table does. With ``row_column``, the view has one more
    column of that name: each row's position, an integer.

    Raises:
        SQLError: When the table has no columns.
    """
    kernel = table.kernel
    names = [c.name for c in kernel.refs]
    if not names:
        raise SQLError("the table has no columns to query")
    fields = [f"c{i}" for i in range(len(names))]
    cells = kernel.cells()
    columns: Sequence[Any]
    if cells is not None:
        columns = [[row[i] for row in cells] for i in range(len(names))]
    else:
        with kernel.scan() as scan:
            query = scan.select(
                *(exp.alias_(scan.cell(n), ident(f)) for f, n in zip(fields, names, strict=True))
            ).order_by(scan.pos, copy=False)
            arrays = kernel.store.fetch_numpy(query)
        columns = [arrays[f] for f in fields]
    types = column_types(table, names)
    source = f"__cells_{name}"
    projections = [
        exp.alias_(typed_cell(exp.column(ident(f)), types[n]), ident(n))
        for f, n in zip(fields, names, strict=True)
    ]
    if row_column is not None:
        field = f"c{len(fields)}"
        fields = [*fields, field]
        columns = [*columns, [str(i) for i in range(table.num_rows)]]
        position = exp.cast(exp.column(ident(field)), "BIGINT")
        projections.append(exp.alias_(position, ident(row_column)))
    select = exp.select(*projections).from_(table_ref(source))
    return {"columns": fields, "cells": columns, "select": render(select), "source": source}
