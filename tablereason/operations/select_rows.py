"""select_rows: keep rows by 0-based position."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from tablereason.errors import RowIndexError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.table.lineage import KEPT, Step

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


class SelectRowsArgs(OperationArgs):
    """Positions (0-based) of the rows to keep; order and repeats do not matter."""

    indices: list[int] = Field(default_factory=list)


@operation(
    "select_rows",
    SelectRowsArgs,
    "keep the rows at the given positions, in table order",
    lineage=KEPT,
)
def select_rows(table: Table, args: SelectRowsArgs) -> Table:
    """Keep the rows at ``args.indices``, duplicates removed, in table order.

    Raises:
        RowIndexError: If a position is outside ``0..num_rows-1``.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["a"], [["x"], ["y"], ["z"]])
        >>> t.select_rows([2, 0, 2]).rows()
        [['x'], ['z']]
    """
    wanted = np.asarray(args.indices, dtype=np.int64)
    if len(wanted) > 1 and not bool(np.all(wanted[1:] > wanted[:-1])):
        wanted = np.sort(wanted, kind="stable")
        wanted = wanted[np.concatenate(([True], wanted[1:] != wanted[:-1]))]
    bad = wanted[(wanted < 0) | (wanted >= table.num_rows)].tolist()
    if bad:
        valid = f"0..{table.num_rows - 1}" if table.num_rows else "none (the table is empty)"
        raise RowIndexError(
            f"row position(s) {bad[:5]} out of range; valid positions are {valid} (0-based)"
        )
    kernel = table.kernel
    rows = kernel.row_ids()[wanted]
    cells = kernel.held_cells()
    records = None if cells is None else [cells[i] for i in wanted.tolist()]
    return kernel.derive(Step(operation="select_rows", args=args), rows=rows, records=records)
