"""How a table's rows are read in SQL: its columns' storage and the relation over them.

A :class:`~tablereason.table.Table` is a list of base row ids over physical DuckDB
tables plus column references; :class:`Scan` turns that into a ``FROM`` clause with
joins and the expressions operations build their queries from; :func:`find_column`
resolves a column name the way every operation does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from sqlglot import exp

from tablereason.errors import UnknownColumnError, closest
from tablereason.table.storage import POS, RID, col, table_ref


@dataclass(frozen=True)
class Column:
    """A column: unique display ``name``, header ``label`` as given, and storage.

    ``source`` and ``field`` name the physical table and column holding the cells. A
    computed column holds no cells: its ``expression`` gives each row's text from other
    columns, with column references qualified by the physical tables they read
    (``"base_0"."c1"``), and :class:`Scan` evaluates it wherever the column is read.
    Its ``field`` is then a name of its own that no physical table has, so that two
    computed columns never compare equal.
    """

    name: str
    label: str
    source: str
    field: str
    expression: exp.Expr | None = dataclass_field(default=None, compare=False, repr=False)

    @property
    def sources(self) -> tuple[str, ...]:
        """The physical tables the column's cells are read from."""
        if self.expression is None:
            return (self.source,)
        tables = [c.table for c in self.expression.find_all(exp.Column) if c.table]
        return tuple(dict.fromkeys(tables)) or (self.source,)


def find_column(columns: Sequence[Column], name: str) -> Column:
    """The column ``name`` refers to: exact match first, then a unique case-insensitive one.

    A name that matches several columns ignoring case, or none, is then compared with
    surrounding spaces ignored too.

    Raises:
        UnknownColumnError: Naming the closest column and every available one.

    Example:
        >>> find_column([Column("Year", "Year", "b", "c0")], "year ").name
        'Year'
    """
    for column in columns:
        if column.name == name:
            return column
    folded = [c for c in columns if c.name.casefold() == name.casefold()]
    if len(folded) == 1:
        return folded[0]
    if not folded:
        folded = [c for c in columns if c.name.strip().casefold() == name.strip().casefold()]
        if len(folded) == 1:
            return folded[0]
    names = [c.name for c in columns]
    best = closest(name, names)
    hint = f"; did you mean {best!r}?" if best else ""
    raise UnknownColumnError(
        f"unknown column {name!r}{hint} available columns: {', '.join(repr(n) for n in names)}"
    )


class Scan:
    """A table's rows as a SQL relation: ``FROM`` and joins, column references.

    Built from the table's base, columns and row-order relation (``order``, or
    ``None`` when the table uses every base row in base order).
    """

    def __init__(self, base: str, columns: Sequence[Column], order: str | None) -> None:
        self.base = base
        self.order = order
        self._columns = {c.name: c for c in columns}
        self._aliases: dict[str, str] = {base: "b"}
        for column in columns:
            for source in column.sources:
                if source not in self._aliases:
                    self._aliases[source] = f"a{len(self._aliases)}"

    @property
    def pos(self) -> exp.Expr:
        """Expression for the 0-based position of a row in the table."""
        return col(POS, "o") if self.order else col(RID, "b")

    @property
    def rid(self) -> exp.Expr:
        """Expression for the base row id of a row."""
        return col(RID, "b")

    def cell(self, name: str) -> exp.Expr:
        """Expression for the cell of the column whose display name is ``name``."""
        column = self._columns[name]
        if column.expression is not None:
            return _requalified(column.expression, self._aliases)
        return col(column.field, self._aliases[column.source])

    def portable(self, expression: exp.Expr) -> exp.Expr:
        """``expression`` (built from this scan's cells) with tables named, not aliases.

        The result can be stored in a computed :class:`Column` and read by any later
        scan of a table that has the same sources.
        """
        return _requalified(expression, {a: s for s, a in self._aliases.items()})

    def select(self, *expressions: exp.Expr) -> exp.Select:
        """``SELECT expressions`` over the table's rows (joins included)."""
        query = exp.select(*expressions, copy=False).from_(table_ref(self.base, "b"), copy=False)
        for source, alias in self._aliases.items():
            if source != self.base:
                query = query.join(
                    table_ref(source, alias),
                    on=exp.EQ(this=col(RID, alias), expression=col(RID, "b")),
                    join_type="left",
                    copy=False,
                )
        if self.order:
            query = query.join(
                table_ref(self.order, "o"),
                on=exp.EQ(this=col(RID, "o"), expression=col(RID, "b")),
                copy=False,
            )
        return query


def _requalified(expression: exp.Expr, names: dict[str, str]) -> exp.Expr:
    """A copy of ``expression`` whose column qualifiers are renamed by ``names``."""

    def rename(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.table in names:
            return col(node.name, names[node.table])
        return node

    return expression.transform(rename)
