"""Bounded summaries of a table computed in DuckDB: schema profile and cell retrieval.

Methods that show tables too large for a prompt use these instead of reading the
rows into Python: every function runs a fixed number of queries over all rows and
returns results whose size is set by its arguments, never by the table's size.

* :func:`profile`: row count and, per column, its type (as conditions read it), how
  many cells are filled and distinct, the most frequent values with their counts,
  and for numbers and dates the smallest and largest cell and the sum;
* :func:`~tablereason.operations.cell_retrieval.retrieve` (its own module): the rows
  that mention terms, ranked and capped;
* :func:`group_summary`: the most frequent values of a column with counts, how many
  distinct values there are and the reference's distinct-over-filled ratio;
* :func:`lowercased`: a lower-cased copy computed by DuckDB;
* :func:`same_order`: whether two tables of one family hold the same rows in order.

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["kind", "mm"], [["snow", "2"], ["rain", "5"], ["snow", "1"]])
    >>> p = profile(t, examples=2)
    >>> p.num_rows, p.columns[0].top, p.columns[1].total
    (3, [('snow', 2), ('rain', 1)], 8.0)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

from tablereason.table.kernel import RID, ident
from tablereason.table.relation import Scan
from tablereason.table.types import (
    NUMBER_TYPES,
    ORDERED_TYPES,
    ColumnType,
    column_types,
    missing,
    typed_cell,
)

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

APPROX_ROWS = 100_000
"""Tables with more rows than this estimate distinct counts of mostly-unique columns."""
GROUP_DISTINCT_MAX = 100_000
"""In such tables, columns with more distinct values than this are not grouped either
(a group table that size would cost memory in proportion to the table)."""


@dataclass(frozen=True)
class ColumnProfile:
    """One column summarised over every row.

    Attributes:
        name: Display name.
        type: Its column type (:mod:`tablereason.table.types`): ``integer``,
            ``decimal``, ``boolean``, ``date``, ``timestamp`` or ``text``.
        filled: Non-empty cells (the others are missing: ``NULL``).
        distinct: Distinct non-empty values.
        top: Most frequent non-empty values with their counts (ties alphabetical).
        low: Cell text of the smallest value (numbers and dates).
        high: Cell text of the largest value (numbers and dates).
        total: Sum of the values (numbers).
        approximate: ``distinct`` is an estimate (a column of a table of more than
            :data:`APPROX_ROWS` rows with more than half of its values, or more than
            :data:`GROUP_DISTINCT_MAX`, distinct); ``top`` then lists examples only.
        missing: Missing cells (empty or only spaces), which read as ``NULL``.
    """

    name: str
    type: ColumnType
    filled: int
    distinct: int
    top: list[tuple[str, int]]
    low: str | None = None
    high: str | None = None
    total: float | None = None
    approximate: bool = False
    missing: int = 0


@dataclass(frozen=True)
class TableProfile:
    """Row count and one :class:`ColumnProfile` per column."""

    num_rows: int
    columns: list[ColumnProfile]


class ProfileCache:
    """Column profiles already computed, reused for tables holding the same rows.

    A column's profile depends only on its cells and the set of rows, so tables that
    keep their parent's rows (column selection) reuse it. The cache keeps the row
    arrays it keys on alive.
    """

    def __init__(self) -> None:
        self._columns: dict[tuple[object, ...], ColumnProfile] = {}
        self._alive: list[object] = []

    def key(self, table: Table, name: str, examples: int) -> tuple[object, ...]:
        """What a column's profile depends on: its storage and the table's rows."""
        column = table.column(name)
        rows = table.kernel.row_order
        if rows is not None and not any(r is rows for r in self._alive):
            self._alive.append(rows)
        marker = None if rows is None else id(rows)
        return (
            id(table.kernel.store),
            column.source,
            column.field,
            marker,
            table.num_rows,
            examples,
        )

    def get(self, key: tuple[object, ...]) -> ColumnProfile | None:
        """The profile stored under ``key``, if any."""
        return self._columns.get(key)

    def put(self, key: tuple[object, ...], column: ColumnProfile) -> None:
        """Store a column's profile."""
        self._columns[key] = column


def profile(table: Table, examples: int = 3, *, cache: ProfileCache | None = None) -> TableProfile:
    """Summarise every column of ``table`` in DuckDB (a few queries, bounded results).

    Distinct values are counted exactly, except in a column of a table of more than
    :data:`APPROX_ROWS` rows whose values are mostly different: its count is an
    estimate (``ColumnProfile.approximate``) and its examples come without counts.
    With ``cache``, columns already profiled over the same rows are not read again.
    """
    keys = {n: cache.key(table, n, examples) for n in table.columns} if cache else {}
    known = {n: c for n, k in keys.items() if cache and (c := cache.get(k)) is not None}
    fresh = _profile(table, [n for n in table.columns if n not in known], examples)
    for name, column in fresh.items():
        if cache is not None:
            cache.put(keys[name], column)
    columns = [known.get(n) or fresh[n] for n in table.columns]
    return TableProfile(
        table.num_rows, [replace(c, name=n) for c, n in zip(columns, table.columns, strict=True)]
    )


def _profile(table: Table, names: list[str], examples: int) -> dict[str, ColumnProfile]:
    """Profiles of the named columns (the queries behind :func:`profile`)."""
    if not names:
        return {}
    types = column_types(table, names)
    big = table.num_rows > APPROX_ROWS
    stats: list[exp.Expr] = []
    typed = [n for n in names if types[n] in ORDERED_TYPES]
    with table.kernel.scan() as scan:
        for name in names:
            cell = scan.cell(name)
            filled = exp.Not(this=missing(cell))
            stats.append(filtered(exp.Count(this=exp.Literal.number(1)), filled))
            if big:
                estimate = exp.func("approx_count_distinct", cell.copy())
                stats.append(filtered(estimate, filled.copy()))
            else:  # the exact count comes with the frequent values (:func:`_top`); a
                # COUNT(DISTINCT) here would cost each thread a hash table of every value
                stats.append(exp.Null())
        for name in typed:
            cell = scan.cell(name)
            value = typed_cell(cell.copy(), types[name])
            stats.append(exp.func("arg_min", cell.copy(), value.copy()))
            stats.append(exp.func("arg_max", cell.copy(), value.copy()))
            stats.append(exp.func("sum", value) if types[name] in NUMBER_TYPES else exp.Null())
        row = list(table.kernel.store.fetch(scan.select(*stats))[0]) if table.num_rows else []
        columns: dict[str, ColumnProfile] = {}
        extremes = row[2 * len(names) :]
        for i, name in enumerate(names):
            kind = types[name]
            if not row:
                columns[name] = ColumnProfile(name, kind, 0, 0, [])
                continue
            filled_n, distinct_n = int(row[2 * i] or 0), int(row[2 * i + 1] or 0)
            approximate = big and distinct_n > min(filled_n // 2, GROUP_DISTINCT_MAX)
            if approximate:
                top = _first(table, scan, name, examples)
            else:
                top, distinct_n = _top(table, scan, name, examples, distinct_n)
            low = high = None
            total = None
            if kind in ORDERED_TYPES:
                j = 3 * typed.index(name)
                low, high = extremes[j], extremes[j + 1]
                total = None if extremes[j + 2] is None else float(extremes[j + 2])
            columns[name] = ColumnProfile(
                name,
                kind,
                filled_n,
                distinct_n,
                top,
                low,
                high,
                total,
                approximate,
                missing=table.num_rows - filled_n,
            )
    return columns


def _first(table: Table, scan: Scan, name: str, limit: int) -> list[tuple[str, int]]:
    """Alphabetically first non-empty values of a column (counts not known: 1).

    Read with a top-N sort rather than a DISTINCT, whose hash table would grow with
    the column; repeats among the first values are dropped, so fewer may come back.
    """
    cell = scan.cell(name)
    filled = exp.Not(this=missing(cell))
    query = (
        scan.select(exp.alias_(cell.copy(), "v"))
        .where(filled, copy=False)
        .order_by(exp.column("v"), copy=False)
        .limit(4 * limit, copy=False)
    )
    values = dict.fromkeys(str(v) for (v,) in table.kernel.store.fetch(query))
    return [(v, 1) for v in list(values)[:limit]]


def _top(
    table: Table, scan: Scan, name: str, limit: int, distinct: int
) -> tuple[list[tuple[str, int]], int]:
    """The most frequent non-empty values and the exact number of distinct ones.

    At most ``limit`` values, ties alphabetical; ``distinct`` is returned when the
    column has no non-empty value.
    """
    cell = scan.cell(name)
    filled = exp.Not(this=missing(cell))
    count = exp.func("count", exp.Star())
    groups = exp.Window(this=exp.func("count", exp.Star()))
    query = (
        scan.select(exp.alias_(cell.copy(), "v"), exp.alias_(count, "n"), exp.alias_(groups, "g"))
        .where(filled, copy=False)
        .group_by(cell.copy(), copy=False)
        .order_by(exp.Ordered(this=exp.column("n"), desc=True), exp.column("v"), copy=False)
        .limit(max(limit, 1), copy=False)
    )
    found = table.kernel.store.fetch(query)
    top = [(str(v), int(n)) for v, n, _ in found][:limit]
    return top, int(found[0][2]) if found else distinct


def group_summary(
    table: Table, column: str, limit: int
) -> tuple[list[tuple[str, int]], int, float | None]:
    """A column's most frequent values, its number of distinct values and its group ratio.

    Returns the ``limit`` most frequent values (empty included, in the order of
    :meth:`Table.group_by`), the number of distinct values, and distinct non-empty
    values over non-empty cells (``None`` when every cell is empty).

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["k"], [["a"], ["b"], ["a"], [""]])
        >>> group_summary(t, "k", limit=1)
        ([('a', 2)], 3, 0.6666666666666666)
    """
    name = table.column(column).name
    grouped = table.group_by(name)
    groups = [(value, int(count)) for value, count in grouped.rows(limit)]
    # Distinct and filled counts are read off the group table (one row per value), not
    # by a COUNT(DISTINCT) over every row, whose hash table costs each thread memory.
    with grouped.kernel.scan() as scan:
        value = scan.cell(grouped.columns[0])
        filled = exp.Not(this=missing(value))
        count = exp.cast(scan.cell(grouped.columns[1]), exp.DataType.Type.BIGINT)
        query = scan.select(
            filtered(exp.Count(this=exp.Literal.number(1)), filled),
            filtered(exp.func("sum", count), filled.copy()),
        )
        distinct, filled_n = (int(v or 0) for v in grouped.kernel.store.fetch(query)[0])
    ratio = distinct / filled_n if filled_n else None
    return groups, grouped.num_rows, ratio


def lowercased(table: Table) -> Table:
    """A new source table with header, cells and caption lower-cased by DuckDB.

    Example:
        >>> from tablereason.table import Table
        >>> lowercased(Table.from_records(["Name"], [["Ann"]], caption="X")).to_records()
        [['name'], ['ann']]
    """
    caption = table.caption.lower() if table.caption else table.caption
    labels = [h.lower() for h in table.columns]
    kernel = table.kernel
    with kernel.scan() as scan:
        select = scan.select(
            exp.alias_(scan.pos, ident(RID)),
            *(
                exp.alias_(exp.func("lower", scan.cell(c)), ident(f"c{i}"))
                for i, c in enumerate(table.columns)
            ),
        ).order_by(scan.pos, copy=False)
        return kernel.source_from_query(labels, select, caption)


def same_order(first: Table, second: Table) -> bool:
    """Whether two tables derived from one another hold the same rows in the same order."""
    return (
        first.kernel.base == second.kernel.base
        and first.num_rows == second.num_rows
        and bool(np.array_equal(first.kernel.row_ids(), second.kernel.row_ids()))
    )


def filtered(aggregate: exp.Expr, condition: exp.Expr) -> exp.Expr:
    """``aggregate FILTER (WHERE condition)``."""
    return exp.Filter(this=aggregate, expression=exp.Where(this=condition))
