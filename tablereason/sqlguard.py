"""Checks that a SQL text is one read-only SELECT over known tables.

Used for model-written SQL before it reaches DuckDB (which is itself locked
down: no file or network access, configuration locked). The check is an
allow-list over the sqlglot syntax tree: a single query statement, table
references only to the allowed names or to the query's own CTEs, and no
function that reads files, settings or the catalog.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlglot
from sqlglot import exp

from tablereason.errors import SQLError

DIALECT = "duckdb"

_FORBIDDEN_NODES: tuple[type[exp.Expr], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Create",
        "Drop",
        "Alter",
        "Command",
        "Copy",
        "Attach",
        "Detach",
        "Pragma",
        "Set",
        "Use",
        "Transaction",
        "Commit",
        "Rollback",
        "Into",
        "LoadData",
        "Describe",
        "Show",
        "Cache",
        "Uncache",
        "Refresh",
        "Analyze",
        "Install",
    )
    if hasattr(exp, name)
)
_FORBIDDEN_FUNCTIONS = {
    "glob",
    "getenv",
    "query",
    "query_table",
    "current_setting",
    "sniff_csv",
    "parquet_scan",
    "checkpoint",
    "force_checkpoint",
    "enable_profiling",
    "install",
    "load",
    "summary",
    "which_secret",
    "icu_calendar_names",
    "test_all_types",
}
_FORBIDDEN_PREFIXES = (
    "read_",
    "pragma_",
    "duckdb_",
    "sqlite_",
    "postgres_",
    "mysql_",
    "iceberg_",
    "delta_",
    "parquet_",
    "json_execute",
    "http",
    "s3",
    "arrow_scan",
)


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def check_select(query: str, tables: Iterable[str]) -> exp.Query:
    """Parse ``query`` and check it is one read-only SELECT over ``tables``.

    Args:
        query: SQL text (DuckDB dialect); CTEs and set operations are allowed.
        tables: Table names the query may read.

    Returns:
        The parsed query.

    Raises:
        SQLError: With a message saying what is not allowed and what is.

    Example:
        >>> check_select("SELECT a FROM t WHERE b > 1", ["t"]).sql()
        'SELECT a FROM t WHERE b > 1'
    """
    allowed = {t.lower() for t in tables}
    try:
        statements = [s for s in sqlglot.parse(query, dialect=DIALECT) if s is not None]
    except sqlglot.errors.ParseError as error:
        raise SQLError(f"the SQL does not parse: {str(error).splitlines()[0]}") from None
    if len(statements) != 1:
        raise SQLError(
            f"expected exactly one SELECT statement, got {len(statements)}; "
            "write a single query (CTEs with WITH are fine)"
        )
    root = statements[0]
    if not isinstance(root, exp.Query):
        raise SQLError(f"only SELECT queries are allowed, got {root.key.upper()}")
    ctes = {cte.alias_or_name.lower() for cte in root.find_all(exp.CTE)}
    for node in root.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise SQLError(f"{node.key.upper()} is not allowed; only a read-only SELECT is")
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name in _FORBIDDEN_FUNCTIONS or name.startswith(_FORBIDDEN_PREFIXES):
                raise SQLError(f"the function {name}() is not allowed in queries over tables")
        if isinstance(node, exp.Table):
            _check_table(node, allowed, ctes)
    return root


def _check_table(node: exp.Table, allowed: set[str], ctes: set[str]) -> None:
    target = node.this
    if not isinstance(target, exp.Identifier):
        raise SQLError(
            "table functions and file paths are not allowed in FROM; "
            f"read only from: {', '.join(sorted(allowed))}"
        )
    if node.args.get("db") or node.args.get("catalog"):
        raise SQLError(f"qualified table names are not allowed; use {', '.join(sorted(allowed))}")
    name = target.name.lower()
    if name not in allowed and name not in ctes:
        raise SQLError(
            f"unknown table {target.name!r}; the query may read only: {', '.join(sorted(allowed))}"
        )
