"""Checks that a SQL text is one read-only SELECT over known tables.

Used for model-written SQL before it reaches DuckDB. The check is an
allow-list over the sqlglot syntax tree: a single query statement, table
references only to the allowed names or to CTEs visible where they are used
(a CTE defined inside a subquery is not visible outside it), and no function
that reads files, settings or the catalog. Input nested too deeply to parse
safely is refused before parsing. Every refusal is a :class:`SQLGuardError`.

The guard gives the model a readable message; it is not the boundary. The
query then runs in a worker process that holds only the tables it was given
(see :mod:`tablereason.table.sqlengine`), so a query the guard misjudges still
cannot reach anything else.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

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


MAX_NESTING = 24
"""Deepest bracket nesting, and longest run of unary operators, the guard parses."""
MAX_TREE_DEPTH = 200
"""Deepest syntax tree the guard accepts."""
_TOO_DEEP = (
    f"the query is nested too deeply (more than {MAX_NESTING} levels of brackets or "
    "unary operators); write it flatter, for example with CTEs"
)
_OPENERS = {TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE}
_CLOSERS = {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE}
_UNARY = {TokenType.NOT, TokenType.DASH, TokenType.PLUS, TokenType.TILDE}


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
    if not isinstance(query, str):
        raise SQLGuardError(f"the query must be text, not {type(query).__name__}")
    try:
        check_nesting(query)
        statements = [s for s in sqlglot.parse(query, dialect=DIALECT) if s is not None]
    except SQLGuardError:
        raise
    except RecursionError:
        raise SQLGuardError(_TOO_DEEP) from None
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as error:
        raise SQLGuardError(f"the SQL does not parse: {_first_line(error)}") from None
    except Exception as error:  # the parser failing on odd input
        raise SQLGuardError(
            f"the SQL does not parse ({type(error).__name__}); rewrite it"
        ) from None
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
    _check_depth(root)
    for node in root.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise SQLGuardError(f"{node.key.upper()} is not allowed; only a read-only SELECT is")
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name.startswith(_FORBIDDEN_PREFIXES):
                raise SQLGuardError(f"the function {name}() is not allowed in queries over tables")
        if isinstance(node, exp.Table):
            _check_table(node, allowed, available)
    return root


def render(root: exp.Query, max_rows: int | None = None) -> tuple[str, str]:
    """The checked query as DuckDB SQL, and that query wrapped in a row limit.

    ``max_rows + 1`` rows at most come back from the wrapped query, so a caller
    can tell a result that was cut.

    Raises:
        SQLGuardError: The tree cannot be written back as SQL.

    Example:
        >>> render(check_select("SELECT 1 AS n", ["t"]), 5)[1]
        'SELECT * FROM (SELECT 1 AS n) AS _q LIMIT 6'
    """
    try:
        inner = root.sql(dialect=DIALECT, comments=False)
        if max_rows is None:
            return inner, inner
        wrapped = exp.select(exp.Star()).from_(exp.paren(root.copy()).as_("_q")).limit(max_rows + 1)
        return inner, wrapped.sql(dialect=DIALECT, comments=False)
    except RecursionError:
        raise SQLGuardError(_TOO_DEEP) from None
    except Exception as error:  # a construct sqlglot cannot write back
        raise SQLGuardError(
            f"the query cannot be checked ({type(error).__name__}: {_first_line(error)}); "
            "rewrite it more simply"
        ) from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


def check_nesting(query: str) -> None:
    """Refuse input nested deeper than the parser can safely follow (before it parses).

    Counts brackets and runs of unary operators over sqlglot's tokens, which are read
    without recursion.

    Raises:
        SQLGuardError: More than :data:`MAX_NESTING` levels.
        sqlglot.errors.TokenError: The text does not tokenize.

    Example:
        >>> try:
        ...     check_nesting("(" * 30 + "1" + ")" * 30)
        ... except SQLGuardError as error:
        ...     print(str(error)[:30])
        the query is nested too deeply
    """
    depth = run = 0
    for token in sqlglot.tokenize(query, read=DIALECT):
        kind = token.token_type
        if kind in _OPENERS:
            depth += 1
            if depth > MAX_NESTING:
                raise SQLGuardError(_TOO_DEEP)
        elif kind in _CLOSERS:
            depth -= 1
        run = run + 1 if kind in _UNARY else 0
        if run > MAX_NESTING:
            raise SQLGuardError(_TOO_DEEP)


def _check_depth(root: exp.Expr) -> None:
    depths = {id(root): 0}
    for node in root.walk():
        depth = depths[id(node)] if node is root else depths[id(node.parent)] + 1
        depths[id(node)] = depth
        if depth > MAX_TREE_DEPTH:
            raise SQLGuardError(_TOO_DEEP)


def _check_table(node: exp.Table, allowed: set[str], available: str) -> None:
    target = node.this
    if not isinstance(target, exp.Identifier):
        raise SQLGuardError(
            f"table functions and file paths are not allowed in FROM; read only from: {available}"
        )
    if node.args.get("db") or node.args.get("catalog"):
        raise SQLGuardError(f"qualified table names are not allowed; use: {available}")
    name = target.name.lower()
    if name not in allowed and name not in _visible_ctes(node):
        raise SQLGuardError(f"unknown table {target.name!r}; the query may read only: {available}")


def _visible_ctes(node: exp.Expr) -> set[str]:
    """Names of the CTEs in scope at ``node``: those of enclosing WITHs defined before it.

    A CTE is visible in the body of the query that defines it, in the CTEs
    listed after it in the same WITH, and in itself under WITH RECURSIVE; not
    outside that query.
    """
    names: set[str] = set()
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            ctes = list(parent.expressions)
            position = next((i for i, c in enumerate(ctes) if c is child), len(ctes))
            visible = ctes[: position + 1] if parent.args.get("recursive") else ctes[:position]
            names.update(c.alias_or_name.lower() for c in visible)
        else:
            with_ = parent.args.get("with_")
            if isinstance(with_, exp.With) and with_ is not child:
                names.update(c.alias_or_name.lower() for c in with_.expressions)
        child, parent = parent, parent.parent
    return names
