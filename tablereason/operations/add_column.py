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

import duckdb
from pydantic import Field, model_validator
from sqlglot import exp

from tablereason.errors import SQLError, TableError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.operations.row_expressions import (
    compile_expression,
    parse_expression,
    resolve_columns,
)
from tablereason.table.lineage import Lineage, Origin, Refs, Step, cells_in, kept_cells
from tablereason.table.relation import Column
from tablereason.table.storage import new_name

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

TIMEOUT_S = 30.0
_FRACTIONAL = ("DOUBLE", "FLOAT", "REAL")


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
    cast, a time limit) surfaces now, as it would if its results were stored; the
    column then holds the expression, not a copy of the results (row expressions are
    deterministic: see :mod:`tablereason.operations.row_expressions`). A stored copy
    would cost memory in proportion to the table, and joining it back for each read
    costs a hash table of every row.
    """
    assert args.expression is not None
    kernel = table.kernel
    store = kernel.store
    with kernel.scan() as scan:
        value, types = compile_expression(table, args.expression, scan)
        if not table.num_rows:  # checked, but nothing to compute
            source = store.add_base([[]], 0, rids=kernel.row_ids())
            column = Column(args.name, args.name, source, "c0")
            step = Step(operation="add_column", args=args, detail={"types": types})
            return kernel.derive(step, columns=[*kernel.refs, column], records=[])
        try:
            with store.time_limit(TIMEOUT_S):
                kind = store.fetch(scan.select(exp.func("typeof", value.copy())).limit(1))
                if kind and str(kind[0][0]).upper() in _FRACTIONAL:
                    value = _number_text(value)
                text = exp.func(
                    "coalesce",
                    exp.cast(value, exp.DataType.build("VARCHAR")),
                    exp.Literal.string(""),
                )
                # Every row's text, computed and measured (not stored).
                store.fetch(scan.select(exp.func("max", exp.func("length", text.copy()))))
        except duckdb.InterruptException:
            raise SQLError(
                f"the expression ran longer than {TIMEOUT_S:g} s and was stopped"
            ) from None
        except duckdb.Error as error:
            raise SQLError(
                f"the expression {args.expression!r} failed: {str(error).splitlines()[0]}; "
                f"columns read as {types}"
            ) from None
        stored = scan.portable(text)
    column = Column(args.name, args.name, kernel.base, new_name("expr"), expression=stored)
    step = Step(operation="add_column", args=args, detail={"types": types})
    return kernel.derive(step, columns=[*kernel.refs, column])


def _number_text(value: exp.Expr) -> exp.Expr:
    """A fractional number as text: whole numbers without ``.0``, others to 9 decimals."""
    whole = exp.and_(
        exp.EQ(this=value.copy(), expression=exp.func("trunc", value.copy())),
        exp.LT(this=exp.func("abs", value.copy()), expression=exp.Literal.number("1e15")),
    )
    integral = exp.cast(exp.cast(value.copy(), exp.DataType.build("BIGINT")), "VARCHAR")
    rounded = exp.cast(exp.func("round", value.copy(), exp.Literal.number(9)), "VARCHAR")
    return exp.Case(ifs=[exp.If(this=whole, true=integral)], default=rounded)
