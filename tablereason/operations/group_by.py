"""group_by: count the rows of each distinct value of a column."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from sqlglot import exp

from tablereason.operations.catalog import OperationArgs, operation
from tablereason.table.kernel import RID, ident
from tablereason.table.lineage import Step

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

COUNT_LABEL = "Count"


class GroupByArgs(OperationArgs):
    """The column to group by."""

    column: str


@operation(
    "group_by",
    GroupByArgs,
    "a table of each distinct value of a column and how many rows have it, most frequent first",
)
def group_by(table: Table, args: GroupByArgs) -> Table:
    """Count rows per distinct value of ``args.column``.

    One row per distinct value (empty values included) with its ``Count``,
    ordered by count descending, ties by value ascending.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["party"], [["red"], ["blue"], ["red"]])
        >>> t.group_by("party").rows()
        [['red', '2'], ['blue', '1']]
    """
    name = table.column(args.column).name
    step = Step(operation="group_by", args=args)
    kernel = table.kernel
    cells = kernel.cells()
    if cells is not None:
        # Python path for small tables. DuckDB compares text byte by byte in UTF-8,
        # which orders like Python's code-point comparison.
        i = kernel.position(name)
        counted = sorted(Counter(row[i] for row in cells).items(), key=lambda vc: (-vc[1], vc[0]))
        columns = [[value for value, _ in counted], [str(count) for _, count in counted]]
        return kernel.from_columns(step, [name, COUNT_LABEL], columns, len(counted))
    with kernel.scan() as scan:
        value = scan.cell(name)
        counts = scan.select(
            exp.alias_(value, "v"), exp.alias_(exp.func("count", exp.Star()), "n")
        ).group_by(value, copy=False)
        rank = exp.Window(
            this=exp.RowNumber(),
            order=exp.Order(
                expressions=[
                    exp.Ordered(this=exp.column("n"), desc=True),
                    exp.Ordered(this=exp.column("v")),
                ]
            ),
        )
        select = exp.select(
            exp.alias_(exp.Sub(this=rank, expression=exp.Literal.number(1)), RID),
            exp.alias_(exp.column("v"), "c0"),
            exp.alias_(exp.Cast(this=exp.column("n"), to=exp.DataType.build("VARCHAR")), "c1"),
        ).from_(exp.Subquery(this=counts, alias=exp.TableAlias(this=ident("g"))), copy=False)
        return kernel.from_query(step, [name, COUNT_LABEL], select)
