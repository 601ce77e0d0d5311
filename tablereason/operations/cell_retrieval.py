"""Cell retrieval: the rows of a table that mention some terms, found and ranked in DuckDB.

:func:`retrieve` scores every row in one query (a cell equal to a term, a cell
containing it), compares terms that match nothing with the distinct values of the
text columns by spelling, and returns the best row positions, capped; only those
positions reach Python.

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["kind", "mm"], [["snow", "2"], ["rain", "5"], ["snow", "1"]])
    >>> retrieve(t, ["rain"], limit=5).positions
    [1]
    >>> retrieve(t, ["snowy"], limit=5).close
    [('snowy', 'kind', 'snow', 2)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from tablereason.operations.table_profile import TableProfile, filtered, profile
from tablereason.table.kernel import POS, ident
from tablereason.table.relation import Scan

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

FUZZY_MIN = 0.88
"""Smallest Jaro-Winkler similarity for a term to match a cell value by spelling."""
FUZZY_DISTINCT_MAX = 50_000
"""Columns with more distinct values than this are not searched by spelling."""
_JOIN = "\x1f"


@dataclass(frozen=True)
class Retrieval:
    """Rows found for some terms.

    Attributes:
        positions: 0-based positions of the best rows, best first.
        matches: Rows matching per term (exact or contained), over every row.
        close: Cell values spelled like a term: ``(term, column, value, count)``.
    """

    positions: list[int]
    matches: dict[str, int] = field(default_factory=dict)
    close: list[tuple[str, str, str, int]] = field(default_factory=list)


def retrieve(
    table: Table,
    terms: Sequence[str],
    limit: int,
    *,
    columns: Sequence[str] | None = None,
    spell: Callable[[str], bool] = lambda term: True,
    summary: TableProfile | None = None,
) -> Retrieval:
    """The rows that mention ``terms``, best first, at most ``limit``.

    A term scores 2 in a row where some cell equals it and 1 where some cell contains
    it (both ignoring case). Terms that match no row at all are compared by spelling
    with the distinct values of the text columns (Jaro-Winkler at least
    :data:`FUZZY_MIN`); rows holding such a value score 1 for it. Rows are ranked by
    score, then table order.

    Args:
        table: The table to search.
        terms: Words or phrases (compared lower-cased).
        limit: Most rows returned.
        columns: Columns to search (default: all).
        spell: Which of the terms that match no row are compared by spelling.
        summary: The table's :func:`profile`, when known (saves queries).
    """
    wanted = list(dict.fromkeys(t.lower().replace(_JOIN, "").strip() for t in terms))
    wanted = [t for t in wanted if t]
    names = [table.column(c).name for c in columns] if columns else table.columns
    if not wanted or not names or not table.num_rows:
        return Retrieval([])
    with table.kernel.scan() as scan:
        # One lowered text per row: the cells between separators, so that a term
        # between two separators is a whole cell and a match never spans two cells.
        sep = exp.Literal.string(_JOIN)
        joined = exp.Anonymous(
            this="concat_ws", expressions=[sep.copy(), *(scan.cell(n) for n in names)]
        )
        text = exp.DPipe(
            this=exp.DPipe(this=sep.copy(), expression=exp.func("lower", joined)),
            expression=sep.copy(),
        )
        rows = scan.select(exp.alias_(scan.pos, ident(POS)), exp.alias_(text, "txt"))
        source = exp.Subquery(this=rows, alias=exp.TableAlias(this=ident("r")))
        txt = exp.column("txt")

        def has(term: str, whole: bool = False) -> exp.Expr:
            needle = f"{_JOIN}{term}{_JOIN}" if whole else term
            return exp.func("contains", txt.copy(), exp.Literal.string(needle))

        counts = exp.select(
            *(filtered(exp.Count(this=exp.Literal.number(1)), has(t)) for t in wanted)
        ).from_(source.copy())
        found = [int(n or 0) for n in table.kernel.store.fetch(counts)[0]]
        matches = dict(zip(wanted, found, strict=True))
        unmatched = [t for t, n in matches.items() if not n and spell(t)]
        close = _close_values(table, scan, unmatched, summary) if unmatched else []
        score: exp.Expr = exp.Literal.number(0)
        for term in wanted:
            case = exp.Case(
                ifs=[
                    exp.If(this=has(term, whole=True), true=exp.Literal.number(2)),
                    exp.If(this=has(term), true=exp.Literal.number(1)),
                ],
                default=exp.Literal.number(0),
            )
            score = exp.Add(this=score, expression=case)
        for _, _, value, _ in close:
            same = has(value.lower(), whole=True)
            score = exp.Add(
                this=score,
                expression=exp.Case(
                    ifs=[exp.If(this=same, true=exp.Literal.number(1))],
                    default=exp.Literal.number(0),
                ),
            )
        scored = exp.select(exp.column(POS), exp.alias_(score, "s")).from_(source.copy())
        query = (
            exp.select(exp.column(POS))
            .from_(exp.Subquery(this=scored, alias=exp.TableAlias(this=ident("q"))))
            .where(exp.GT(this=exp.column("s"), expression=exp.Literal.number(0)))
            .order_by(exp.Ordered(this=exp.column("s"), desc=True), exp.column(POS))
            .limit(limit)
        )
        ranked = table.kernel.store.fetch_numpy(query)
    return Retrieval([int(p) for p in ranked[POS].tolist()], matches, close)


def _close_values(
    table: Table, scan: Scan, terms: Sequence[str], summary: TableProfile | None
) -> list[tuple[str, str, str, int]]:
    """Cell values of text columns spelled like one of ``terms``: (term, column, value, rows).

    One query per text column with at most :data:`FUZZY_DISTINCT_MAX` distinct values
    compares every term with its distinct values; at most 2 values per term and column.
    """
    if summary is None:
        summary = profile(table, examples=0)
    text = [
        c.name
        for c in summary.columns
        if c.type == "text" and not c.approximate and c.distinct <= FUZZY_DISTINCT_MAX
    ]
    terms_table = exp.Values(
        expressions=[exp.Tuple(expressions=[exp.Literal.string(t)]) for t in terms],
        alias=exp.TableAlias(this=ident("w"), columns=[ident("term")]),
    )
    found: list[tuple[str, str, str, int]] = []
    for name in text:
        cell = scan.cell(name)
        distinct = scan.select(
            exp.alias_(cell.copy(), "v"), exp.alias_(exp.func("count", exp.Star()), "n")
        ).group_by(cell.copy(), copy=False)
        similarity = exp.func(
            "jaro_winkler_similarity", exp.func("lower", exp.column("v")), exp.column("term")
        )
        rank = exp.Window(
            this=exp.RowNumber(),
            partition_by=[exp.column("term")],
            order=exp.Order(
                expressions=[
                    exp.Ordered(this=exp.column("s"), desc=True),
                    exp.Ordered(this=exp.column("v")),
                ]
            ),
        )
        pairs = (
            exp.select(
                exp.column("term"), exp.column("v"), exp.column("n"), exp.alias_(similarity, "s")
            )
            .from_(exp.Subquery(this=distinct, alias=exp.TableAlias(this=ident("d"))))
            .join(terms_table.copy(), join_type="cross")
        )
        query = (
            exp.select(exp.column("term"), exp.column("v"), exp.column("n"))
            .from_(exp.Subquery(this=pairs, alias=exp.TableAlias(this=ident("p"))))
            .where(exp.GTE(this=exp.column("s"), expression=exp.Literal.number(FUZZY_MIN)))
            .qualify(exp.LTE(this=rank, expression=exp.Literal.number(2)))
            .order_by(
                exp.column("term"), exp.Ordered(this=exp.column("s"), desc=True), exp.column("v")
            )
        )
        for term, value, count in table.kernel.store.fetch(query):
            found.append((str(term), name, str(value), int(count)))
    order = {t: i for i, t in enumerate(terms)}
    return sorted(found, key=lambda f: order[f[0]])
