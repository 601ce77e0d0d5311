"""verbalize: describe each row in a plain sentence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tablereason.operations.catalog import OperationArgs, operation

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


class VerbalizeArgs(OperationArgs):
    """How many rows to describe (``None``: all)."""

    max_rows: int | None = None


def row_sentence(position: int, columns: list[str], cells: list[str]) -> str:
    """One row as a sentence, e.g. ``Row 2: the Year is 1999, the Team is (empty).``."""
    parts = [
        f"the {name} is {' '.join(cell.split()) if cell.strip() else '(empty)'}"
        for name, cell in zip(columns, cells, strict=True)
    ]
    return f"Row {position}: " + ", ".join(parts) + "."


@operation("verbalize", VerbalizeArgs, "describe each row in a plain sentence", returns="text")
def verbalize(table: Table, args: VerbalizeArgs) -> str:
    """Plain sentences, one per row, naming each column and its value.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["name", "year"], [["Ann", "1999"], ["Bo", ""]])
        >>> print(t.verbalize())
        Row 1: the name is Ann, the year is 1999.
        Row 2: the name is Bo, the year is (empty).
    """
    lines = []
    if table.caption:
        lines.append(f"The table is titled: {' '.join(table.caption.split())}.")
    columns = table.columns
    for i, row in enumerate(table.rows(args.max_rows), start=1):
        lines.append(row_sentence(i, columns, row))
    if args.max_rows is not None and table.num_rows > args.max_rows:
        lines.append(f"({table.num_rows - args.max_rows} more rows not shown.)")
    return "\n".join(lines)
