"""group_by: count the rows of each distinct value of a column."""

from __future__ import annotations

from sqlglot import exp

from tablereason.operations.catalog import OperationArgs, operation
from tablereason.storage import to_text
from tablereason.table import Step, Table

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
        >>> t = Table.from_records(["party"], [["red"], ["blue"], ["red"]])
        >>> t.group_by("party").rows()
        [['red', '2'], ['blue', '1']]
    """
    name = table.column(args.column).name
    with table._scan() as scan:
        value = scan.cell(name)
        count = exp.func("count", exp.Star())
        query = (
            scan.select(exp.alias_(value, "v"), exp.alias_(count, "n"))
            .group_by(value)
            .order_by(exp.Ordered(this=exp.column("n"), desc=True), exp.column("v"))
        )
        result = table._store.fetch(query)
    values = [to_text(r[0]) for r in result]
    counts = [str(r[1]) for r in result]
    return table._new_base(
        Step(operation="group_by", args=args), [name, COUNT_LABEL], [values, counts], len(result)
    )
