"""add_column: append a column of given values, or one computed from an expression.

With ``values`` the column holds exactly those cells, one per row. With
``expression`` (for example ``year(date)`` or ``regexp_extract(notes, '[0-9]+')``) DuckDB
computes the cell of every row from that row's columns: the expression is checked
like a ``filter_rows`` condition (sqlglot, the SQL guard, known columns, typed cells;
see :mod:`tablereason.operations.row_expressions`), and its result becomes text
(``NULL`` becomes ""; fractional numbers are rounded to 9 decimals).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, model_validator
from sqlglot import exp

from tablereason.errors import SQLError, TableError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.operations.expression_bounds import (
    MAX_LAYERS,
    ExpressionLimits,
    Input,
    bound,
    check_bound,
    check_output,
    expression_limits,
    with_measured,
)
from tablereason.operations.row_expressions import (
    Compiled,
    compile_expression,
    parse_expression,
    resolve_columns,
)
from tablereason.table.lineage import Lineage, Origin, Refs, Step, cells_in, kept_cells
from tablereason.table.relation import Column, Computed, closure, result
from tablereason.table.storage import RID, ident, new_name

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

_FRACTIONAL = ("DOUBLE", "FLOAT", "REAL")
_WHAT = "the expression"


class AddColumnArgs(OperationArgs):
    """The new column's name, and either one value per row or an expression."""

    name: str
    values: list[str] = Field(default_factory=list)
    expression: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> AddColumnArgs:
        if self.expression is not None and self.values:
            raise ValueError("give either values or an expression, not both")
        return self


def _column_cells(child: Table, refs: Refs) -> Origin:
    """Kept cells map to themselves; the new column's to the cells its expression reads."""
    args = child.step.args if child.step is not None else None
    if child.parent is None or not isinstance(args, AddColumnArgs):
        return kept_cells(child, refs)
    kept, added = Refs(), Refs()
    for column, rows, tags in refs.items():
        (added if column == args.name else kept).add(column, rows, tags)
    origin = kept_cells(child, kept)
    for _, rows, tags in added.items():
        if args.expression is None:
            reason = f"column {args.name!r} holds values given to add_column, not table cells"
            origin.untraced.append((tags, reason))
            continue
        read = resolve_columns(child.parent, parse_expression(args.expression))
        if not read:
            origin.untraced.append((tags, f"column {args.name!r} is computed from no column"))
        origin.refs.merge(cells_in(child, read, rows, tags))
    return origin


@operation(
    "add_column",
    AddColumnArgs,
    "append a new column with one value per row, or computed by a SQL expression",
    lineage=Lineage(
        _column_cells,
        "kept cells map to themselves; a computed cell to the cells of the columns its "
        "expression reads in its row; a given value to nothing",
    ),
)
def add_column(table: Table, args: AddColumnArgs) -> Table:
    """Append column ``args.name`` holding ``args.values`` or ``args.expression``'s results.

    Raises:
        TableError: If the name is empty or already used, or the number of values
            differs from the number of rows.
        SQLError, UnknownColumnError: If the expression is refused or fails (see
            :func:`~tablereason.operations.filter_rows.filter_rows`).

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["a"], [["1"], ["2"]])
        >>> t.add_column("b", ["x", "y"]).rows()
        [['1', 'x'], ['2', 'y']]
        >>> t.apply("add_column", name="twice", expression="a * 2").rows()
        [['1', '2'], ['2', '4']]
    """
    if not args.name.strip():
        raise TableError("add_column needs a non-empty column name")
    if args.name in table.columns:
        raise TableError(
            f"column {args.name!r} already exists; choose another name (columns: {table.columns})"
        )
    if args.expression is not None:
        return _computed(table, args)
    if len(args.values) != table.num_rows:
        raise TableError(
            f"add_column {args.name!r} got {len(args.values)} values for {table.num_rows} rows; "
            "give exactly one value per row"
        )
    kernel = table.kernel
    source = kernel.store.add_base([args.values], table.num_rows, rids=kernel.row_ids())
    column = Column(args.name, args.name, source, "c0")
    cells = kernel.held_cells()
    return kernel.derive(
        Step(operation="add_column", args=args),
        columns=[*kernel.refs, column],
        records=None
        if cells is None
        else [[*row, value] for row, value in zip(cells, args.values, strict=True)],
    )


def _computed(table: Table, args: AddColumnArgs) -> Table:
    """The column computed by DuckDB from other columns, evaluated wherever it is read.

    The expression is run over every row once here, so that an error in it (a failed
    cast, a time limit) surfaces now, as it would if its results were stored, and so
    that its text is measured; the column then holds the expression, not a copy of the
    results (row expressions are deterministic: see
    :mod:`tablereason.operations.row_expressions`). A stored copy would cost memory in
    proportion to the table, and joining it back for each read costs a hash table of
    every row. A later expression over this column reads it by name, so columns
    computed from computed columns stay as small as their own expressions; past
    :data:`~tablereason.operations.expression_bounds.MAX_LAYERS` of them, the table's
    computed columns are stored first (see :func:`_stored`).
    """
    assert args.expression is not None
    kernel = table.kernel
    limits = expression_limits()
    step = Step(operation="add_column", args=args)
    refs = list(kernel.refs)
    over = table
    if sum(c.computed is not None for c in closure(refs)) >= MAX_LAYERS:
        refs = _stored(table)
        over = kernel.derive(step, columns=refs)  # the same table over the stored copies
    compiled = compile_expression(over, args.expression)
    check_bound(compiled.bound, [*refs, *compiled.inputs], table.num_rows, limits, _WHAT)
    types = compiled.types
    step = Step(operation="add_column", args=args, detail={"types": types})
    if not table.num_rows:  # checked, but nothing to compute
        source = kernel.store.add_base([[]], 0, rids=kernel.row_ids())
        column = Column(args.name, args.name, source, "c0")
        return kernel.derive(step, columns=[*refs, column], records=[])
    what = f"the expression {args.expression!r}"
    try:
        raw = _column(args.name, compiled, None, limits, kernel.base)
        with over.kernel.scan(raw, what=what) as scan:
            kind = kernel.store.fetch(scan.select(exp.func("typeof", scan.value(raw))).limit(1))
        text = _number_text() if kind and str(kind[0][0]).upper() in _FRACTIONAL else _text()
        column = _column(args.name, compiled, text, limits, kernel.base)
        with over.kernel.scan(column, what=what) as scan:
            size = exp.func("strlen", scan.value(column))
            # Every row's text, computed and measured (not stored).
            largest, total = kernel.store.fetch(
                scan.select(exp.func("max", size), exp.func("sum", size.copy()))
            )[0]
    except SQLError as error:
        raise SQLError(f"{error}; columns read as {types}") from None
    column = with_measured(column, int(largest or 0), int(total or 0))
    check_output(column, refs, limits)
    return kernel.derive(step, columns=[*refs, column])


def _stored(table: Table) -> list[Column]:
    """The table's columns, its computed ones replaced by stored copies of their text.

    The copies hold the table's rows (by row id), so any table derived later reads
    them; each keeps the size of its text for the limits on computed text.
    """
    kernel = table.kernel
    computed = [c for c in kernel.refs if c.computed is not None]
    with kernel.scan() as scan:
        select = scan.select(
            exp.alias_(scan.rid, ident(RID)),
            *(exp.alias_(scan.value(c), ident(f"c{i}")) for i, c in enumerate(computed)),
        )
        base, _ = kernel.store.add_query(select)
    copies = {
        c.key: Column(c.name, c.label, base, f"c{i}", stored_bytes=c.computed.total_bytes)
        for i, c in enumerate(computed)
        if c.computed is not None
    }
    return [copies.get(c.key, c) for c in kernel.refs]


def _column(
    name: str, compiled: Compiled, text: exp.Expr | None, limits: ExpressionLimits, base: str
) -> Column:
    """The computed column of ``compiled``, its text built by ``text`` (over the value)."""
    size = compiled.bound.value_bytes
    work = compiled.bound.work
    if text is not None:  # the text's parts, the value (counted already) their input
        work += bound(_text(), lambda _: Input(size)).work - size
    computed = Computed(
        value=compiled.value,
        inputs=compiled.inputs,
        text=text,
        seconds=limits.seconds,
        max_bytes=size,
        work=work,
        growth=compiled.bound.growth,
    )
    return Column(name, name, base, new_name("expr"), computed=computed)


def _text() -> exp.Expr:
    """The value as text (``NULL`` as ""); the value is read once (see :func:`_number_text`)."""
    return exp.func(
        "coalesce", exp.cast(result(), exp.DataType.build("VARCHAR")), exp.Literal.string("")
    )


def _number_text() -> exp.Expr:
    """A fractional number as text, to 9 decimals; whole ones below 10^15 without ``.0``.

    ``-0`` reads as ``0``.

    The value is read once: DuckDB's optimizer may copy it into each place it is read,
    and over columns computed from one another copies would multiply.
    """
    text = exp.cast(exp.func("round", result(), exp.Literal.number(9)), "VARCHAR")
    digits = exp.Literal.string(r"^(-?[0-9]{1,15})\.0$")
    whole = exp.func("regexp_replace", text, digits, exp.Literal.string(r"\1"))
    zero = exp.func("regexp_replace", whole, exp.Literal.string("^-0$"), exp.Literal.string("0"))
    return exp.func("coalesce", zero, exp.Literal.string(""))
