"""Row numbers through a query: which input rows each result row of a SELECT came from.

A model-written query over one table ``t`` says nothing about the rows it read.
:func:`with_row_numbers` rewrites it (with sqlglot, never by pasting text) to carry
a row-number column of ``t`` through to its result: a query that keeps rows gets
the row number as one more output column; a query that aggregates or groups
(``count``, ``sum``, ``GROUP BY``, ``DISTINCT``) gets ``list(row number)``, the rows
of each result row. Everything else about the query (its conditions, order and
limit) is left as it is, so the rewritten query returns the same rows, each with
its input rows. It also says which input columns each output column reads and which
ones the conditions read.

Queries that combine tables (joins, ``UNION``, ``WITH``) or do not read ``t``
directly are not rewritten: the reason comes back instead.

Example:
    >>> q = with_row_numbers('SELECT name FROM t WHERE pts > 2', ["name", "pts"], "__row")
    >>> q.sql
    'SELECT name, "__row" FROM t WHERE pts > 2'
    >>> q.grouped, q.reads, q.condition
    (False, [['name']], ['pts'])
    >>> with_row_numbers('SELECT count(*) FROM t', ["name"], "__row").sql
    'SELECT COUNT(*), LIST("__row") FROM t'
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from tablereason.table.sqlguard import DIALECT, check_select

TABLE_NAME = "t"


@dataclass(frozen=True)
class RowQuery:
    """A query rewritten to carry row numbers (see module notes).

    Attributes:
        sql: The rewritten query; its last column holds the row numbers.
        grouped: Whether that column holds a list of row numbers per result row
            (aggregates, groups) rather than one.
        reads: For each output column of the original query, the input columns it
            reads (``[]`` for ``count(*)``).
        condition: The input columns the conditions read (``WHERE``, ``GROUP BY``,
            ``HAVING``).
    """

    sql: str
    grouped: bool
    reads: list[list[str]]
    condition: list[str]


def with_row_numbers(query: str, columns: list[str], row_column: str) -> RowQuery | str:
    """``query`` rewritten to carry ``row_column`` of ``t`` to its result, or why it cannot be.

    Args:
        query: One SELECT over ``t`` (checked with the SQL guard here too).
        columns: The columns of ``t`` as the query names them (``row_column`` not among them).
        row_column: The name of the row-number column the rewritten query reads.

    Returns:
        The :class:`RowQuery`, or a sentence saying why the rows cannot be followed.

    Raises:
        SQLGuardError: When the query is refused by the guard.
    """
    root = check_select(query, [TABLE_NAME])
    if not isinstance(root, exp.Select):
        return "the query combines results (UNION, INTERSECT or EXCEPT)"
    if root.args.get("with_") is not None or root.args.get("with") is not None:
        return "the query defines tables of its own (WITH)"
    source = root.args.get("from_") or root.args.get("from")
    if root.args.get("joins") or root.args.get("laterals") or source is None:
        return "the query joins tables"
    if not isinstance(source.this, exp.Table) or source.this.name.lower() != TABLE_NAME:
        return "the query reads a subquery, not the table"
    known = {c.casefold(): c for c in columns}
    reads: list[list[str]] = []
    for projection in root.expressions:
        if isinstance(projection, exp.Star) or (
            isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
        ):
            reads.extend([c] for c in columns)
        else:
            reads.append(_reads(projection, known, root))
    condition: list[str] = []
    for key in ("where", "group", "having"):
        if root.args.get(key) is not None:
            read = _reads(root.args[key], known, root)
            condition.extend(c for c in read if c not in condition)
    rewritten = root.copy()
    row = exp.column(exp.to_identifier(row_column, quoted=True))
    aggregated = root.args.get("group") is not None or any(_aggregates(p) for p in root.expressions)
    distinct = root.args.get("distinct") is not None
    if distinct and not aggregated:
        if any(isinstance(p, exp.Star) for p in root.expressions):
            return "the query selects DISTINCT *"
        rewritten.set("distinct", None)
        keys = [p.this if isinstance(p, exp.Alias) else p for p in root.expressions]
        rewritten = rewritten.group_by(*(k.copy() for k in keys), copy=False)
    grouped = aggregated or distinct
    added = exp.Anonymous(this="list", expressions=[row]) if grouped else row
    rewritten = rewritten.select(added, append=True, copy=False)
    return RowQuery(rewritten.sql(dialect=DIALECT), grouped, reads, condition)


def _reads(node: exp.Expr, known: dict[str, str], root: exp.Select) -> list[str]:
    """The input columns ``node`` (a part of ``root``) reads outside subqueries, in order."""
    found: list[str] = []
    for column in node.find_all(exp.Column):
        if column.parent_select is not root:
            continue
        name = known.get(column.name.casefold())
        if name is not None and name not in found:
            found.append(name)
    return found


def _aggregates(node: exp.Expr) -> bool:
    """Whether ``node`` aggregates rows (an aggregate function outside a window)."""
    return any(not isinstance(agg.parent, exp.Window) for agg in node.find_all(exp.AggFunc))
