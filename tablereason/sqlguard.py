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

_FORBIDDEN_NODE_NAMES = (
    "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "Command", "Copy",
    "Attach", "Detach", "Pragma", "Set", "Use", "Transaction", "Commit", "Rollback", "Into",
    "LoadData", "Describe", "Summarize", "Show", "Export", "Cache", "Uncache", "Refresh",
    "Analyze", "Install",
)  # fmt: skip
_FORBIDDEN_NODES: tuple[type[exp.Expr], ...] = tuple(
    getattr(exp, name)
    for name in _FORBIDDEN_NODE_NAMES
    if isinstance(getattr(exp, name, None), type)
)
_FORBIDDEN_PREFIXES = (
    "read_", "duckdb_", "pragma_", "sniff_", "parquet_", "iceberg_", "delta_", "st_read",
    "glob", "getenv", "query", "load_", "install_", "which_secret", "sqlite_", "postgres_",
    "mysql_", "http", "s3", "json_execute", "from_substrait", "get_substrait", "arrow_scan",
    "current_setting", "checkpoint", "force_checkpoint", "enable_profiling", "summary",
)  # fmt: skip


class SQLGuardError(SQLError):
    """The query was refused before running; the message says what to change."""


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return str(node.sql_name()).lower()


def check_select(query: str, tables: Iterable[str]) -> exp.Query:
    """Parse ``query`` and check it is one read-only SELECT over ``tables``.

    Args:
        query: SQL text (DuckDB dialect); CTEs and set operations are allowed.
        tables: Table names the query may read.

    Returns:
        The parsed query.

    Raises:
        SQLGuardError: With a message saying what is not allowed and what is.

    Example:
        >>> check_select("SELECT a FROM t WHERE b > 1", ["t"]).sql()
        'SELECT a FROM t WHERE b > 1'
    """
    names = list(tables)
    allowed = {t.lower() for t in names}
    available = ", ".join(sorted(names)) or "(none)"
    try:
        statements = [s for s in sqlglot.parse(query, dialect=DIALECT) if s is not None]
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as error:
        raise SQLGuardError(f"the SQL does not parse: {str(error).splitlines()[0]}") from None
    if len(statements) != 1:
        raise SQLGuardError(
            f"expected exactly one SELECT statement, got {len(statements)}; "
            "write a single query (CTEs with WITH are fine)"
        )
    root = statements[0]
    while isinstance(root, exp.Subquery | exp.Paren) and isinstance(root.this, exp.Expr):
        root = root.this
    if not isinstance(root, exp.Query):
        raise SQLGuardError(
            f"only SELECT queries are allowed, got {root.key.upper()}; "
            "write one SELECT (WITH ... SELECT is fine)"
        )
    ctes = {cte.alias_or_name.lower() for cte in root.find_all(exp.CTE)}
    for node in root.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise SQLGuardError(f"{node.key.upper()} is not allowed; only a read-only SELECT is")
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name.startswith(_FORBIDDEN_PREFIXES):
                raise SQLGuardError(f"the function {name}() is not allowed in queries over tables")
        if isinstance(node, exp.Table):
            _check_table(node, allowed, ctes, available)
    return root


def _check_table(node: exp.Table, allowed: set[str], ctes: set[str], available: str) -> None:
    target = node.this
    if not isinstance(target, exp.Identifier):
        raise SQLGuardError(
            f"table functions and file paths are not allowed in FROM; read only from: {available}"
        )
    if node.args.get("db") or node.args.get("catalog"):
        raise SQLGuardError(f"qualified table names are not allowed; use: {available}")
    name = target.name.lower()
    if name not in allowed and name not in ctes:
        raise SQLGuardError(f"unknown table {target.name!r}; the query may read only: {available}")
