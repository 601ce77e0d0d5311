"""How a table's rows are read in SQL: its columns' storage and the relation over them.

A :class:`~tablereason.table.Table` is a list of base row ids over physical DuckDB
tables plus column references; :class:`Scan` turns that into a ``FROM`` clause and the
expressions operations build their queries from; :func:`find_column` resolves a column
name the way every operation does.

A column is either a field of a physical table or :class:`Computed` from other
columns. A computed column's value is an expression over *slots* (:func:`slot`), not
over columns: the :class:`Scan` evaluates it in a relation that holds exactly the
columns it was given as inputs, under the fresh names ``v0, v1, ...``, and nothing
else (no row id, no column of the table it was not given, no position)::

    LATERAL (SELECT <value> AS r FROM (SELECT <input 0> AS v0, ...) AS i) AS e

DuckDB turns this into a plain projection (it costs nothing over the expression
alone), and whatever name or position the expression holds, it can resolve only to
its inputs. Each computed column is one layer (a ``WITH`` entry) over the layers of the
columns it reads, and reads them by name, so a chain of columns computed from each
other is as long as the chain, however often each reads the one before.

Example:
    >>> from tablereason.table.storage import render
    >>> plain = Column("n", "n", "base_0", "c0")
    >>> double = Column("2n", "2n", "base_0", "expr_0",
    ...                 computed=Computed(exp.Mul(this=slot(0), expression=exp.Literal.number(2)),
    ...                                   (plain,)))
    >>> scan = Scan("base_0", [plain, double], None)
    >>> print(render(scan.select(scan.cell("2n"))))  # doctest: +NORMALIZE_WHITESPACE
    WITH "k0" AS NOT MATERIALIZED (SELECT "b"."__rid" AS "__rid", "b"."__rid" AS "__pos",
    "b"."c0" AS "p0" FROM "base_0" AS "b"), "k1" AS NOT MATERIALIZED (SELECT "k0".*,
    "e"."r" AS "x0" FROM "k0", LATERAL (SELECT "i"."v0" * 2 AS "r" FROM (SELECT "k0"."p0"
    AS "v0") AS "i") AS "e") SELECT "s"."x0" FROM "k1" AS "s"
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from sqlglot import exp

from tablereason.errors import UnknownColumnError, closest
from tablereason.table.storage import POS, RID, col, ident, table_ref

SLOTS = "i"
"""Alias of the relation of a computed column's inputs (``v0, v1, ...``)."""
RESULT = "e"
"""Alias of the lateral relation holding a computed column's value."""
VALUE = "r"
"""The name of that value."""
ROWS = "s"
"""Alias of the layered relation every query over computed columns reads."""


def slot(index: int) -> exp.Column:
    """The reference to input ``index`` in a computed column's value."""
    return col(f"v{index}", SLOTS)


def result() -> exp.Column:
    """The reference to a computed column's value in its ``text``."""
    return col(VALUE, RESULT)


@dataclass(frozen=True)
class Computed:
    """How a computed column's cells come from other columns' cells, row by row.

    Attributes:
        value: The expression over :func:`slot` references, one per input.
        inputs: The columns the slots read, in order.
        text: The cell's text built from the value (over :func:`result`), or
            ``None`` for the value itself.
        seconds: Time limit of every query that reads the column.
        max_bytes: Largest cell text, in bytes (an upper bound).
        total_bytes: Bytes of text over the rows it was computed for (an upper
            bound for any later table, which holds some of those rows).
        work: Bytes per row its evaluation may hold at once, its computed inputs'
            included (an upper bound).
        growth: How many functions that can multiply a value's size are nested
            in it, through its inputs too.
    """

    value: exp.Expr
    inputs: tuple[Column, ...]
    text: exp.Expr | None = None
    seconds: float = 30.0
    max_bytes: int = 0
    total_bytes: int = 0
    work: int = 0
    growth: int = 0


@dataclass(frozen=True)
class Column:
    """A column: unique display ``name``, header ``label`` as given, and storage.

    ``source`` and ``field`` name the physical table and column holding the cells. A
    computed column holds no cells: its ``computed`` says how each row's text comes
    from other columns, and :class:`Scan` evaluates it wherever the column is read. Its
    ``field`` is then a name of its own that no physical table has, so that two
    computed columns never compare equal.
    """

    name: str
    label: str
    source: str
    field: str
    computed: Computed | None = dataclass_field(default=None, compare=False, repr=False)
    stored_bytes: int = dataclass_field(default=0, compare=False, repr=False)
    """For a computed column stored since (see add_column), the bytes of text it was
    measured to hold, which the limits on computed text still count."""

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the column's cells: its table and field."""
        return self.source, self.field


def closure(columns: Sequence[Column]) -> list[Column]:
    """Every column ``columns`` read, themselves included, each once, inputs first.

    Example:
        >>> a = Column("a", "a", "b0", "c0")
        >>> c = Column("c", "c", "b0", "x1", computed=Computed(slot(0), (a,)))
        >>> [col.name for col in closure([c])]
        ['a', 'c']
    """
    done: dict[tuple[str, str], Column] = {}
    order: list[Column] = []
    stack: list[tuple[Column, bool]] = [(c, False) for c in reversed(columns)]
    while stack:  # a loop, not recursion: chains of computed columns can be long
        column, expanded = stack.pop()
        if column.key in done:
            continue
        if expanded or column.computed is None:
            done[column.key] = column
            order.append(column)
            continue
        stack.append((column, True))
        stack.extend((c, False) for c in reversed(column.computed.inputs) if c.key not in done)
    return order


def sources(columns: Sequence[Column]) -> list[str]:
    """The physical tables the cells of ``columns`` are read from (computed ones' inputs too)."""
    return list(dict.fromkeys(c.source for c in closure(columns) if c.computed is None))


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
    ``None`` when the table uses every base row in base order). Without computed
    columns the relation is the base table joined to the other physical tables by row
    id; with them it is the layered relation described in the module notes, and
    every reference reads it (as ``s``).
    """

    def __init__(self, base: str, columns: Sequence[Column], order: str | None) -> None:
        self.base = base
        self.order = order
        self._columns = {c.name: c for c in columns}
        everything = closure(columns)
        self._computed = [c for c in everything if c.computed is not None]
        self._physical = [c for c in everything if c.computed is None]
        self._aliases: dict[str, str] = {base: "b"}
        for column in self._physical:
            if column.source not in self._aliases:
                self._aliases[column.source] = f"a{len(self._aliases)}"
        self._names: dict[tuple[str, str], str] = {}
        if self._computed:
            self._names.update({c.key: f"p{i}" for i, c in enumerate(self._physical)})
            self._names.update({c.key: f"x{i}" for i, c in enumerate(self._computed)})

    @property
    def seconds(self) -> float | None:
        """The time limit of queries over this relation (``None`` without computed columns).

        The smallest of its computed columns' limits.
        """
        limits = [c.computed.seconds for c in self._computed if c.computed is not None]
        return min(limits) if limits else None

    @property
    def pos(self) -> exp.Expr:
        """Expression for the 0-based position of a row in the table."""
        if self._computed:
            return col(POS, ROWS)
        return col(POS, "o") if self.order else col(RID, "b")

    @property
    def rid(self) -> exp.Expr:
        """Expression for the base row id of a row."""
        return col(RID, ROWS) if self._computed else col(RID, "b")

    def cell(self, name: str) -> exp.Expr:
        """Expression for the cell of the column whose display name is ``name``."""
        return self.value(self._columns[name])

    def value(self, column: Column) -> exp.Expr:
        """Expression for the cells of ``column`` (a column of the scan, or one they read)."""
        if self._computed:
            return col(self._names[column.key], ROWS)
        return col(column.field, self._aliases[column.source])

    def select(self, *expressions: exp.Expr) -> exp.Select:
        """``SELECT expressions`` over the table's rows (joins and layers included)."""
        if not self._computed:
            return self._joined(exp.select(*expressions, copy=False))
        fields = [
            exp.alias_(col(RID, "b"), ident(RID)),
            exp.alias_(col(POS, "o") if self.order else col(RID, "b"), ident(POS)),
            *(
                exp.alias_(col(c.field, self._aliases[c.source]), ident(self._names[c.key]))
                for c in self._physical
            ),
        ]
        layers = [exp.CTE(this=self._joined(exp.select(*fields)), alias=_alias("k0"))]
        for i, column in enumerate(self._computed, start=1):
            layers.append(exp.CTE(this=self._layer(column, f"k{i - 1}"), alias=_alias(f"k{i}")))
        for layer in layers:
            layer.set("materialized", False)  # each is read once: DuckDB inlines it
        query = exp.select(*expressions, copy=False).from_(
            table_ref(f"k{len(self._computed)}", ROWS), copy=False
        )
        query.set("with_", exp.With(expressions=layers))
        return query

    def _joined(self, query: exp.Select) -> exp.Select:
        """``query`` over the base table, the other physical tables and the row order."""
        query = query.from_(table_ref(self.base, "b"), copy=False)
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

    def _layer(self, column: Column, below: str) -> exp.Select:
        """The layer adding ``column`` to the relation ``below``.

        Its value is computed over a relation of its inputs alone, then its text.
        """
        computed = column.computed
        assert computed is not None
        inputs = [
            exp.alias_(col(self._names[c.key], below), ident(f"v{j}"))
            for j, c in enumerate(computed.inputs)
        ] or [exp.alias_(exp.Null(), ident("v"))]
        value = exp.select(exp.alias_(computed.value.copy(), ident(VALUE))).from_(
            exp.Subquery(this=exp.select(*inputs), alias=_alias(SLOTS))
        )
        lateral = exp.Lateral(this=exp.Subquery(this=value), alias=_alias(RESULT))
        text = computed.text.copy() if computed.text is not None else result()
        return (
            exp.select(exp.Column(this=exp.Star(), table=ident(below)))
            .select(exp.alias_(text, ident(self._names[column.key])), copy=False)
            .from_(table_ref(below), copy=False)
            .join(lateral, copy=False)
        )


def _alias(name: str) -> exp.TableAlias:
    return exp.TableAlias(this=ident(name))
