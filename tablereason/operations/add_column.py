"""add_column: append a column of given values."""

from __future__ import annotations

from pydantic import Field

from tablereason.errors import TableError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.relation import Column
from tablereason.table import Step, Table


class AddColumnArgs(OperationArgs):
    """The new column's name and one value per row."""

    name: str
    values: list[str] = Field(default_factory=list)


@operation("add_column", AddColumnArgs, "append a new column with one value per row")
def add_column(table: Table, args: AddColumnArgs) -> Table:
    """Append column ``args.name`` holding ``args.values``.

    Raises:
        TableError: If the name is empty or already used, or the number of values
            differs from the number of rows.

    Example:
        >>> t = Table.from_records(["a"], [["1"], ["2"]])
        >>> t.add_column("b", ["x", "y"]).rows()
        [['1', 'x'], ['2', 'y']]
    """
    if not args.name.strip():
        raise TableError("add_column needs a non-empty column name")
    if args.name in table.columns:
        raise TableError(
            f"column {args.name!r} already exists; choose another name (columns: {table.columns})"
        )
    if len(args.values) != table.num_rows:
        raise TableError(
            f"add_column {args.name!r} got {len(args.values)} values for {table.num_rows} rows; "
            "give exactly one value per row"
        )
    source = table._store.add_base([args.values], table.num_rows, rids=table._rids())
    column = Column(args.name, args.name, source, "c0")
    cells = table._held_cells()
    return table._derive(
        Step(operation="add_column", args=args),
        columns=[*table._columns, column],
        records=None
        if cells is None
        else [[*row, value] for row, value in zip(cells, args.values, strict=True)],
    )
