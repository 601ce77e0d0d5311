"""Run model-written SQL over given tables: a sqlglot guard, then a locked DuckDB connection.

The guard parses with sqlglot (DuckDB dialect) and accepts exactly one query (a
SELECT, optionally with CTEs or set operations) that reads only the given
tables and its own CTEs: no table functions, file paths or URLs, no other
statements (ATTACH, COPY, INSTALL, LOAD, PRAGMA, SET...). What runs is the SQL
regenerated from the checked tree, wrapped in a row limit, on an in-memory
connection with external access disabled, configuration locked, a memory limit,
one thread and a timer that interrupts the query.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from tablereason.errors import ConfigurationError, SQLError
from tablereason.sqlguard import SQLGuardError, check_select

#: Name a single table gets when ``run_sql`` is given one table instead of a mapping.
DEFAULT_TABLE_NAME = "t"


class SQLTimeoutError(SQLError):
    """The query ran longer than its time limit and was interrupted."""


@dataclass(frozen=True)
class SQLLimits:
    """What one query may use.

    Example:
        >>> SQLLimits().threads
        1
    """

    seconds: float = 5.0
    memory: str = "256MB"
    threads: int = 1
    max_rows: int = 10_000
    max_query_chars: int = 20_000


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


def check_query(query: str, table_names: list[str]) -> exp.Expr:
    """Parse ``query`` and check that it is one SELECT over ``table_names`` only.

    The rules are those of :func:`tablereason.sqlguard.check_select`, shared with
    :meth:`tablereason.Table.sql`.

    Raises:
        SQLGuardError: The query is refused; the message says why and what is allowed.

    Example:
        >>> check_query("SELECT count(*) FROM t", ["t"]).sql()
        'SELECT COUNT(*) FROM t'
    """
    return check_select(query, table_names)


def _as_frames(tables: Any) -> dict[str, Any]:
    if not isinstance(tables, Mapping):
        tables = {DEFAULT_TABLE_NAME: tables}
    frames: dict[str, Any] = {}
    for name, table in tables.items():
        frame = table.to_pandas() if hasattr(table, "to_pandas") else table
        if not (hasattr(frame, "columns") and hasattr(frame, "iloc")):
            raise ConfigurationError(
                f"table {name!r} must be a pandas DataFrame or have to_pandas(), "
                f"not {type(table).__name__}"
            )
        frames[str(name)] = frame
    return frames


def _connect(limits: SQLLimits) -> Any:
    import duckdb

    config: dict[str, Any] = {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "memory_limit": limits.memory,
        "threads": limits.threads,
        "temp_directory": "",
    }
    try:
        return duckdb.connect(":memory:", config={**config, "python_enable_replacements": False})
    except duckdb.Error:
        return duckdb.connect(":memory:", config=config)


def run_sql(tables: Any, query: str, limits: SQLLimits | None = None) -> SQLResult:
    """Check and run one SELECT over the given tables.

    Args:
        tables: A mapping of name to table (pandas DataFrame or anything with
            ``to_pandas()``), or one table, which is then called ``t``.
        query: SQL text written by a model (DuckDB dialect).
        limits: Time, memory, thread and row limits.

    Returns:
        The columns and rows (at most ``limits.max_rows``; ``truncated`` says if cut).

    Raises:
        SQLGuardError: The query was refused before running.
        SQLTimeoutError: The query ran too long and was interrupted.
        SQLError: DuckDB reported an error (unknown column, type mismatch, memory).

    Example:
        >>> import pandas as pd
        >>> run_sql(pd.DataFrame({"x": [1, 2, 3]}), "SELECT sum(x) AS s FROM t").rows
        [(6,)]
    """
    limits = limits or SQLLimits()
    if len(query) > limits.max_query_chars:
        raise SQLGuardError(f"the query is longer than {limits.max_query_chars} characters")
    frames = _as_frames(tables)
    root = check_query(query, list(frames))
    inner = root.sql(dialect="duckdb", comments=False)
    wrapped = (
        exp.select(exp.Star())
        .from_(exp.paren(sqlglot.parse_one(inner, read="duckdb")).as_("_q"))
        .limit(limits.max_rows + 1)
    )
    sql = wrapped.sql(dialect="duckdb")
    import duckdb

    conn = _connect(limits)
    timer = threading.Timer(limits.seconds, conn.interrupt)
    started = time.perf_counter()
    try:
        for name, frame in frames.items():
            conn.register(name, frame)
        conn.execute("SET lock_configuration = true")
        timer.start()
        cursor = conn.execute(sql)
        rows = cursor.fetchall()
        columns = [d[0] for d in cursor.description or []]
    except duckdb.InterruptException as exc:
        raise SQLTimeoutError(
            f"the query ran longer than {limits.seconds}s and was stopped; simplify it"
        ) from exc
    except duckdb.Error as exc:
        if time.perf_counter() - started >= limits.seconds:
            raise SQLTimeoutError(
                f"the query ran longer than {limits.seconds}s and was stopped; simplify it"
            ) from exc
        raise SQLError(f"the query failed: {str(exc).splitlines()[0]}") from exc
    finally:
        timer.cancel()
        conn.close()
    truncated = len(rows) > limits.max_rows
    return SQLResult(
        columns=columns,
        rows=rows[: limits.max_rows],
        sql=inner,
        duration=time.perf_counter() - started,
        truncated=truncated,
    )
