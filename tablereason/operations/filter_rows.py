"""filter_rows: keep the rows where a SQL condition holds, decided by DuckDB over every row.

The condition is one SQL expression over the table's columns (DuckDB dialect), for
example ``weather = 'snow'``, ``temp_max > 30`` or ``year(date) = 2012``. It is parsed
with sqlglot, passed through the same guard as model-written SQL, checked against
the columns and typed (see :mod:`tablereason.operations.row_expressions`): a column
whose every non-empty cell is a number compares as a number, dates as dates, the
rest as text. Rows where the condition is false or ``NULL`` are dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

from tablereason.errors import SQLError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.operations.expression_bounds import check_bound, expression_limits
from tablereason.operations.row_expressions import (
    compile_expression,
    parse_expression,
    resolve_columns,
)
from tablereason.table.lineage import Lineage, Refs, Step, cells_in, kept_cells
from tablereason.table.relation import Column, Computed
from tablereason.table.storage import POS, RID, ident, new_name

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


class FilterRowsArgs(OperationArgs):
    """The condition, one SQL expression over the columns (``weather = 'snow'``).

    An empty condition is refused by :func:`filter_rows` with a ``SQLError``, as other
    text that is not a condition is: the text is a model's, and no check of it here may
    fail otherwise (a length constraint would make pydantic refuse text holding a lone
    surrogate with its own error).
    """

    condition: str


def _condition_cells(child: Table, rows: np.ndarray, tags: np.ndarray) -> Refs:
    """The cells that kept these rows of ``child``: the columns its condition reads."""
    args = child.step.args if child.step is not None else None
    if child.parent is None or not isinstance(args, FilterRowsArgs):
        return Refs()
    columns = resolve_columns(child.parent, parse_expression(args.condition))
    return cells_in(child, columns, rows, tags)


@operation(
    "filter_rows",
    FilterRowsArgs,
    "keep the rows where a SQL condition over the columns holds (weather = 'snow')",
    lineage=Lineage(
        kept_cells,
        "each kept cell maps to itself; a kept row rests on the cells its condition reads",
        decided_by=_condition_cells,
    ),
)
def filter_rows(table: Table, args: FilterRowsArgs) -> Table:
    """Keep the rows where ``args.condition`` is true, in table order.

    The step's ``detail`` records the type each column was read as.

    Raises:
        SQLError: When the condition does not parse, is refused by the SQL guard,
            is not a row-level expression, or fails to run (for example a text column
            compared with a number).
        UnknownColumnError: When it names a column the table lacks.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["day", "mm"], [["mon", "12"], ["tue", "3"], ["wed", "40"]])
        >>> t.apply("filter_rows", condition="mm > 10").rows()
        [['mon', '12'], ['wed', '40']]
    """
    kernel = table.kernel
    limits = expression_limits()
    compiled = compile_expression(table, args.condition)
    check_bound(compiled.bound, compiled.inputs, table.num_rows, limits, "the condition")
    step = Step(operation="filter_rows", args=args, detail={"types": compiled.types})
    if not table.num_rows:  # checked, but nothing to run it on
        return kernel.derive(step, rows=kernel.row_ids(), records=kernel.held_cells())
    condition = Column(
        "",
        "",
        kernel.base,
        new_name("condition"),
        computed=Computed(
            compiled.value, compiled.inputs, seconds=limits.seconds, work=compiled.bound.work
        ),
    )
    try:
        with kernel.scan(condition, what=f"the condition {args.condition!r}") as scan:
            query = (
                scan.select(exp.alias_(scan.rid, ident(RID)), exp.alias_(scan.pos, ident(POS)))
                .where(scan.value(condition), copy=False)
                .order_by(scan.pos, copy=False)
            )
            found = kernel.store.fetch_numpy(query)
    except SQLError as error:
        raise SQLError(
            f"{error}; columns read as {compiled.types}: compare numbers with numbers and "
            "quote text"
        ) from None
    rows = np.asarray(found[RID], dtype=np.int64)
    cells = kernel.held_cells()
    records = None
    if cells is not None:
        records = [cells[i] for i in np.asarray(found[POS], dtype=np.int64).tolist()]
    return kernel.derive(step, rows=rows, records=records)
