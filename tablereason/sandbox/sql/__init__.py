"""Run model-written SQL over given tables: a sqlglot guard, then a contained worker.

The guard parses with sqlglot (DuckDB dialect) and accepts exactly one query (a
SELECT, optionally with CTEs or set operations) that reads only the given
tables and the CTEs in scope: no table functions, file paths or URLs, no other
statements (ATTACH, COPY, INSTALL, LOAD, PRAGMA, SET...). What runs is the SQL
regenerated from the checked tree, wrapped in a row limit, in a worker process
(:mod:`tablereason.sandbox.sql.engine`) that holds only these tables, on a connection
with external access disabled and the configuration locked, under a memory
budget, a thread count and a time limit (:class:`SQLLimits`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from tablereason.errors import ConfigurationError
from tablereason.sandbox.sql.engine import (
    SQLLimits,
    SQLResourceError,
    SQLTimeoutError,
    TableInput,
    execute,
)
from tablereason.sandbox.sql.guard import SQLGuardError, check_select, render
from tablereason.table.typed_frame import table_data, table_key
from tablereason.table.value import Table

__all__ = [
    "DEFAULT_TABLE_NAME",
    "SQLGuardError",
    "SQLLimits",
    "SQLResourceError",
    "SQLResult",
    "SQLTimeoutError",
    "check_query",
    "run_sql",
]

#: Name a single table gets when ``run_sql`` is given one table instead of a mapping.
DEFAULT_TABLE_NAME = "t"


@dataclass(frozen=True)
class SQLResult:
    """Rows returned by a query.

    Example:
        >>> SQLResult(columns=["n"], rows=[(1,)], sql="SELECT 1 AS n", duration=0.0).rows
        [(1,)]
    """

    columns: list[str]
    rows: list[tuple[Any, ...]]
    sql: str
    duration: float
    truncated: bool = False

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)


def check_query(query: str, table_names: list[str]) -> exp.Query:
    """Parse ``query`` and check that it is one SELECT over ``table_names`` only.

    The rules are those of :func:`tablereason.sandbox.sql.guard.check_select`, shared with
    :meth:`tablereason.Table.sql`.

    Raises:
        SQLGuardError: The query is refused; the message says why and what is allowed.

    Example:
        >>> check_query("SELECT count(*) FROM t", ["t"]).sql()
        'SELECT COUNT(*) FROM t'
    """
    return check_select(query, table_names)


def _inputs(tables: Any) -> list[TableInput]:
    """What the worker is sent: a Table as its text and typed view, a frame as it is."""
    if not isinstance(tables, Mapping):
        tables = {DEFAULT_TABLE_NAME: tables}
    inputs: list[TableInput] = []
    for key, table in tables.items():
        name = str(key)
        if isinstance(table, Table):
            inputs.append(
                TableInput(
                    name,
                    _typed(table, name),
                    key=table_key(table),
                    cells=table.num_rows * len(table.columns),
                )
            )
            continue
        frame = table.to_pandas() if hasattr(table, "to_pandas") else table
        if not (hasattr(frame, "columns") and hasattr(frame, "iloc")):
            raise ConfigurationError(
                f"table {name!r} must be a Table, a pandas DataFrame or have to_pandas(), "
                f"not {type(table).__name__}"
            )
        inputs.append(TableInput(name, _constant(frame), cells=frame.size))
    return inputs


def _typed(table: Table, name: str) -> Callable[[], Any]:
    return lambda: table_data(table, name)


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def run_sql(tables: Any, query: str, limits: SQLLimits | None = None) -> SQLResult:
    """Check and run one SELECT over the given tables.

    Args:
        tables: A mapping of name to table (a :class:`~tablereason.table.Table`, whose
            columns the query reads as their types with missing cells ``NULL``, a pandas
            DataFrame or anything with ``to_pandas()``), or one table, then called ``t``.
        query: SQL text written by a model (DuckDB dialect).
        limits: Time, memory, thread, row and size limits.

    Returns:
        The columns and rows (at most ``limits.max_rows``; ``truncated`` says if cut).

    Raises:
        SQLGuardError: The query was refused before running.
        SQLTimeoutError: The query ran too long and was interrupted.
        SQLResourceError: The query needed more memory than allowed, or its result
            was too large.
        SQLError: DuckDB reported an error (unknown column, type mismatch...).
            Every failure of the query is an :class:`~tablereason.errors.SQLError`.

    Example:
        >>> import pandas as pd
        >>> run_sql(pd.DataFrame({"x": [1, 2, 3]}), "SELECT sum(x) AS s FROM t").rows
        [(6,)]
    """
    limits = limits or SQLLimits()
    if not isinstance(query, str):
        raise SQLGuardError(f"the query must be text, not {type(query).__name__}")
    if len(query) > limits.max_query_chars:
        raise SQLGuardError(
            f"the query is longer than {limits.max_query_chars} characters; write a shorter one"
        )
    inputs = _inputs(tables)
    inner, sql = render(check_query(query, [i.name for i in inputs]), limits.max_rows)
    started = time.perf_counter()
    columns, rows, truncated = execute(inputs, sql, limits)
    return SQLResult(
        columns=columns,
        rows=rows,
        sql=inner,
        duration=time.perf_counter() - started,
        truncated=truncated,
    )
