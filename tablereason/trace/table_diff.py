"""How a step changed a table, compared by content: added and removed columns and rows.

Works on tables in their JSON form (``{"header", "rows"}``), without row ids, so a trace
read back from a file compares like a live one; the page and the terminal both use it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

TableDict = Mapping[str, Any]


@dataclass
class TableDiff:
    """How a step changed a table, by content (works without row ids).

    Attributes:
        added_columns: Columns of the new table that the old one lacked.
        dropped_columns: Columns of the old table that the new one lacks.
        added_rows: Positions (0-based) of new-table rows absent from the old table.
        dropped_rows: Positions of old-table rows absent from the new table.
        reordered: Same rows, different order.
    """

    added_columns: set[str] = field(default_factory=set)
    dropped_columns: set[str] = field(default_factory=set)
    added_rows: set[int] = field(default_factory=set)
    dropped_rows: set[int] = field(default_factory=set)
    reordered: bool = False

    @property
    def changed(self) -> bool:
        """Whether anything differs."""
        return bool(
            self.added_columns
            or self.dropped_columns
            or self.added_rows
            or self.dropped_rows
            or self.reordered
        )


def diff_tables(before: TableDict, after: TableDict) -> TableDiff:
    """Compare two tables (``{"header", "rows"}``) on the columns they share.

    Rows match as a multiset of their values in the shared columns, so a row kept by
    ``select_rows`` or moved by ``sort_by`` is not marked, and duplicates count.

    Example:
        >>> a = {"header": ["x", "y"], "rows": [["1", "a"], ["2", "b"]]}
        >>> b = {"header": ["x", "z"], "rows": [["2", "B"]]}
        >>> d = diff_tables(a, b)
        >>> sorted(d.added_columns), sorted(d.dropped_columns), d.dropped_rows, d.added_rows
        (['z'], ['y'], {0}, set())
    """
    old_header, new_header = list(before["header"]), list(after["header"])
    common = [c for c in new_header if c in old_header]
    diff = TableDiff(
        added_columns={c for c in new_header if c not in old_header},
        dropped_columns={c for c in old_header if c not in new_header},
    )
    if not common:
        return diff
    old_idx = [old_header.index(c) for c in common]
    new_idx = [new_header.index(c) for c in common]
    old_keys = [tuple(row_cell(r, i) for i in old_idx) for r in before["rows"]]
    new_keys = [tuple(row_cell(r, i) for i in new_idx) for r in after["rows"]]
    diff.added_rows |= _unmatched(new_keys, old_keys)
    diff.dropped_rows |= _unmatched(old_keys, new_keys)
    diff.reordered = not diff.added_rows and not diff.dropped_rows and old_keys != new_keys
    return diff


def row_cell(row: Sequence[str], index: int) -> str:
    """The cell at ``index`` of a row; empty past its end."""
    return row[index] if index < len(row) else ""


def _unmatched(keys: list[tuple[str, ...]], others: list[tuple[str, ...]]) -> set[int]:
    """Positions of ``keys`` left over once each of ``others`` has matched one equal key."""
    pool = Counter(others)
    left = set()
    for pos, key in enumerate(keys):
        if pool[key] > 0:
            pool[key] -= 1
        else:
            left.add(pos)
    return left
