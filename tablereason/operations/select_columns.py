"""select_columns: keep columns by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from tablereason.errors import TableError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.table.lineage import KEPT, Step

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


class SelectColumnsArgs(OperationArgs):
    """Names of the columns to keep (exact first, then case-insensitive)."""

    names: list[str] = Field(default_factory=list)


@operation(
    "select_columns",
    SelectColumnsArgs,
    "keep the named columns, in table order",
    lineage=KEPT,
)
def select_columns(table: Table, args: SelectColumnsArgs) -> Table:
    """Keep the named columns in table order.

    Raises:
        UnknownColumnError: For a name that matches no column.
        TableError: If no name is given.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["a", "B"], [["1", "2"]])
        >>> t.select_columns(["b", "a"]).columns
        ['a', 'B']
    """
    if not args.names:
        raise TableError(f"select_columns needs at least one name; available: {table.columns}")
    keep = {table.column(name).name for name in args.names}
    refs = table.kernel.refs
    positions = [i for i, c in enumerate(refs) if c.name in keep]
    return table.kernel.derive(
        Step(operation="select_columns", args=args),
        columns=[refs[i] for i in positions],
        records=project(table, positions),
    )


def project(table: Table, positions: list[int]) -> list[list[str]] | None:
    """The held cells of a small table restricted to the columns at ``positions``.

    ``None`` when Python does not hold the table's cells.
    """
    cells = table.kernel.held_cells()
    if cells is None:
        return None
    if positions == list(range(len(table.columns))):
        return cells
    return [[row[i] for i in positions] for row in cells]
