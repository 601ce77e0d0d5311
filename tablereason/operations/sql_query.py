"""sql: one guarded, read-only SELECT over the table (named ``t``).

The query text is checked by :func:`~tablereason.sqlguard.check_select` and
always runs on the locked-down DuckDB database. The guard's verdict is cached
per query text, and the final statement (the query with ``t`` defined over the
table's storage) per query and storage layout. A small table derived by other
operations is first written once as a plain physical table of its cells (see
``Table._flattened``), so its statement needs no join and no row-order relation
and a repeated query costs one DuckDB round trip.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import duckdb
from pydantic import Field
from sqlglot import exp

from tablereason.errors import SQLError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.relation import Column, Scan
from tablereason.sqlguard import check_select
from tablereason.storage import ident, render, to_text
from tablereason.table import Step, Table

TABLE_NAME = "t"
MAX_RESULT_ROWS = 1_000_000
_CACHE_SIZE = 512


class SqlArgs(OperationArgs):
    """The query, and a time limit after which it is interrupted."""

    query: str
    timeout_s: float = Field(default=10.0, gt=0)


@operation("sql", SqlArgs, "run one read-only SELECT over the table, referred to as t")
def sql_query(table: Table, args: SqlArgs) -> Table:
    """Run ``args.query`` over the table (as ``t``) and return the result as a table.

    The query is checked with :func:`~tablereason.sqlguard.check_select` and runs
    on the locked-down database with a time limit.

    Raises:
        SQLError: If the query is rejected, fails, runs too long or returns too
            many rows.

    Example:
        >>> t = Table.from_records(["a", "b c"], [["1", "x"], ["2", "y"]])
        >>> t.sql('SELECT "b c" FROM t WHERE CAST(a AS INT) > 1').rows()
        [['y']]
    """
    source = table._flattened()
    with source._scan() as scan:
        statement = _statement(args.query, scan.base, source._columns, scan.order)
        labels, result = _run(table, statement, args.timeout_s)
    columns = [[to_text(row[i]) for row in result] for i in range(len(labels))]
    return table._new_base(Step(operation="sql", args=args), labels, columns, len(result))


@lru_cache(maxsize=_CACHE_SIZE)
def _checked(query: str) -> exp.Query:
    """The guard's verdict on a query text (cached; copy the tree before changing it)."""
    root = check_select(query, [TABLE_NAME])
    if TABLE_NAME in {cte.alias_or_name.lower() for cte in root.find_all(exp.CTE)}:
        raise SQLError(f"{TABLE_NAME!r} is the table's name; give your CTE another name")
    return root


@lru_cache(maxsize=_CACHE_SIZE)
def _statement(query: str, base: str, columns: tuple[Column, ...], order: str | None) -> str:
    """The checked query with ``t`` defined over the table's storage, rendered for DuckDB."""
    scan = Scan(base, columns, order)
    view = scan.select(*(exp.alias_(scan.cell(c.name), ident(c.name)) for c in columns))
    cte = exp.CTE(
        this=view.order_by(scan.pos, copy=False), alias=exp.TableAlias(this=ident(TABLE_NAME))
    )
    root = _checked(query).copy()
    existing = root.args.get("with_")
    if existing is not None:
        existing.set("expressions", [cte, *existing.expressions])
    else:
        root.set("with_", exp.With(expressions=[cte]))
    return render(root)


def _run(table: Table, statement: str, timeout_s: float) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Execute on the table's connection under a time limit: column labels and rows."""
    store = table._store
    with store.connection() as conn, store.time_limit(timeout_s):
        try:
            cursor = conn.execute(statement)
            labels = [d[0] for d in cursor.description or []]
            result = cursor.fetchmany(MAX_RESULT_ROWS + 1)
        except duckdb.InterruptException:
            raise SQLError(f"the query ran longer than {timeout_s} s and was stopped") from None
        except duckdb.Error as error:
            raise SQLError(f"the query failed: {str(error).splitlines()[0]}") from None
    if len(result) > MAX_RESULT_ROWS:
        raise SQLError(
            f"the query returned more than {MAX_RESULT_ROWS} rows; aggregate or add LIMIT"
        )
    if not labels:
        raise SQLError("the query returned no columns")
    return labels, result
