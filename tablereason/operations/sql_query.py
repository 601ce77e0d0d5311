"""sql: one guarded, read-only SELECT over the table (named ``t``).

The query text is checked by :func:`~tablereason.table.sqlguard.check_select` and
runs in a SQL worker process (:mod:`tablereason.table.sqlengine`) that holds this
table as ``t`` and nothing else: no other table of the process, no catalog of
them, no file. The worker keeps the table between queries (keyed by its
storage), so a repeated query on a table sends only the query text. Limits
(memory, threads, rows, result size, query length) are
:func:`~tablereason.table.sqlengine.table_sql_limits`; ``timeout_s`` is the time limit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field
from sqlglot import exp

from tablereason.errors import SQLError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.table.lineage import ROW, Lineage, Origin, Refs, Step
from tablereason.table.sql_rows import RowQuery, with_row_numbers
from tablereason.table.sqlengine import (
    SQLLimits,
    TableInput,
    execute,
    table_sql_limits,
    with_seconds,
)
from tablereason.table.sqlguard import SQLGuardError, check_select, render
from tablereason.table.storage import ident, to_text

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

TABLE_NAME = "t"
_CACHE_SIZE = 512


class SqlArgs(OperationArgs):
    """The query, and a time limit after which it is interrupted."""

    query: str
    timeout_s: float = Field(default=10.0, gt=0)


def _query_cells(child: Table, refs: Refs) -> Origin:
    """Result cells map to the input cells their column reads, in the rows they came from.

    The query is run again with a row number carried through it
    (:func:`~tablereason.table.sql_rows.with_row_numbers`); a count's cells, and whole
    result rows, map to the cells its conditions read in those rows.
    """
    origin = Origin()
    parent, args = child.parent, child.step.args if child.step is not None else None
    if parent is None or not isinstance(args, SqlArgs):
        return origin
    found = _source_rows(parent, args, child)
    if isinstance(found, str):
        origin.untraced.extend((tags, found) for _, _, tags in refs.items())
        return origin
    query, sources = found
    for column, rows, tags in refs.items():
        for row, tag in zip(rows.tolist(), tags.tolist(), strict=True):
            at = sources[row]
            read = [] if column is ROW else query.reads[child.columns.index(column)]
            targets: list[str | None] = list(read or query.condition) or [ROW]
            if column is ROW:
                targets = [ROW, *query.condition]
            for target in targets:
                origin.refs.add(target, at, np.full(len(at), tag, dtype=np.int64))
    return origin


def _source_rows(
    parent: Table, args: SqlArgs, child: Table
) -> tuple[RowQuery, list[np.ndarray]] | str:
    """The rewritten query and each result row's input rows, or why they are not known."""
    row_column = "__row"
    while row_column in parent.columns:
        row_column += "_"
    query = with_row_numbers(args.query, parent.columns, row_column)
    if isinstance(query, str):
        return f"the rows behind the query's result are not known: {query}"
    limits = with_seconds(table_sql_limits(), args.timeout_s)
    statement = _statement(query.sql, limits.max_rows, limits.max_query_chars + 200)
    try:
        _, result, _ = execute([_input(parent, row_column)], statement, limits)
    except SQLError as error:
        return f"the query could not be run again with row numbers: {error}"
    width = len(child.columns)
    if [[to_text(v) for v in row[:width]] for row in result] != child.rows():
        return "the query returned other rows when run again with row numbers"
    sources = []
    for row in result:
        numbers = row[-1] if query.grouped else [row[-1]]
        sources.append(np.asarray([int(n) for n in numbers or []], dtype=np.int64))
    return query, sources


@operation(
    "sql",
    SqlArgs,
    "run one read-only SELECT over the table, referred to as t",
    lineage=Lineage(
        _query_cells,
        "a result cell maps to the cells its column reads in the rows it came from "
        "(the query is run again with row numbers); not available for joins or WITH",
    ),
)
def sql_query(table: Table, args: SqlArgs) -> Table:
    """Run ``args.query`` over the table (as ``t``) and return the result as a table.

    The query is checked with :func:`~tablereason.table.sqlguard.check_select` and runs
    in a SQL worker that holds only this table, under
    :func:`~tablereason.table.sqlengine.table_sql_limits` and ``args.timeout_s``.

    Raises:
        SQLError: If the query is rejected, fails, runs too long, needs too much
            memory or returns too many rows (every failure is a ``SQLError``).

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["a", "b c"], [["1", "x"], ["2", "y"]])
        >>> t.sql('SELECT "b c" FROM t WHERE CAST(a AS INT) > 1').rows()
        [['y']]
    """
    limits = with_seconds(table_sql_limits(), args.timeout_s)
    statement = _statement(args.query, limits.max_rows, limits.max_query_chars)
    labels, result, truncated = execute([_input(table)], statement, limits)
    if truncated:
        raise SQLError(
            f"the query returned more than {limits.max_rows} rows; aggregate or add LIMIT"
        )
    if not labels:
        raise SQLError("the query returned no columns")
    columns = [[to_text(row[i]) for row in result] for i in range(len(labels))]
    return table.kernel.from_columns(Step(operation="sql", args=args), labels, columns, len(result))


@lru_cache(maxsize=_CACHE_SIZE)
def _statement(query: str, max_rows: int, max_chars: int) -> str:
    """The checked query wrapped in the row limit (cached per query text)."""
    if len(query) > max_chars:
        raise SQLGuardError(f"the query is longer than {max_chars} characters; write a shorter one")
    root = check_select(query, [TABLE_NAME])
    if TABLE_NAME in {cte.alias_or_name.lower() for cte in root.find_all(exp.CTE)}:
        raise SQLGuardError(f"{TABLE_NAME!r} is the table's name; give your CTE another name")
    return render(root, max_rows)[1]


def _input(table: Table, row_column: str | None = None) -> TableInput:
    """The table as the worker's ``t``: its display names and text cells, keyed by storage.

    With ``row_column``, ``t`` has one more column, of that name, holding each row's
    position.
    """
    kernel = table.kernel
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr((kernel.base, [(c.name, c.source, c.field) for c in kernel.refs])).encode())
    if kernel.row_order is not None:
        digest.update(kernel.row_order.tobytes())
    n_cells = table.num_rows * len(kernel.refs)
    if row_column is None:
        return TableInput(TABLE_NAME, lambda: _data(table), key=digest.hexdigest(), cells=n_cells)
    digest.update(row_column.encode())

    def numbered() -> dict[str, Any]:
        data = _data(table)
        positions = [str(i) for i in range(table.num_rows)]
        return {"columns": [*data["columns"], row_column], "cells": [*data["cells"], positions]}

    return TableInput(TABLE_NAME, numbered, key=digest.hexdigest(), cells=n_cells)


def _data(table: Table) -> dict[str, Any]:
    kernel = table.kernel
    names = [c.name for c in kernel.refs]
    if not names:
        raise SQLError("the table has no columns to query")
    cells = kernel.cells()
    columns: Sequence[Any]
    if cells is not None:
        columns = [[row[i] for row in cells] for i in range(len(names))]
    else:
        with kernel.scan() as scan:
            query = scan.select(
                *(exp.alias_(scan.cell(n), ident(f"c{i}")) for i, n in enumerate(names))
            ).order_by(scan.pos, copy=False)
            arrays = kernel.store.fetch_numpy(query)
        columns = [arrays[f"c{i}"] for i in range(len(names))]
    return {"columns": names, "cells": columns}


__all__ = ["SQLLimits", "SqlArgs", "sql_query"]
