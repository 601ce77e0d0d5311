"""Provenance: the cells of a source table that cells of a derived table came from.

:func:`trace_back` follows cells (:class:`~tablereason.table.lineage.Refs`) from a
table up its lineage, one step at a time, through the :class:`~tablereason.table.lineage.Lineage`
each operation declares in the catalog, to the table the chain started from (or to a
given ancestor). Whole rows (a count counts rows) collect on the way the cells that
decided they were kept: a filter's condition columns. The result, :class:`Traced`,
keeps every source position as numpy arrays (8 bytes per cell, never a Python object
per cell), so a group of 500,000 rows is traced exactly; :meth:`Traced.read` reads
the values of the first ``limit`` cells only and reports how many there are in all.

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["team", "pts"], [["red", "3"], ["blue", "1"], ["red", "2"]])
    >>> p = t.group_by("team").provenance(0, "Count")
    >>> [(c.row, c.column, c.value) for c in p.cells], p.total
    ([(0, 'team', 'red'), (2, 'team', 'red')], 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tablereason.table.lineage import ROW, Refs, find_registered

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

LIMIT = 100
"""Cells whose values :meth:`Table.provenance` reads by default."""


@dataclass(frozen=True)
class SourceCell:
    """One cell of a source table: its row position (0-based), column name and text."""

    row: int
    column: str
    value: str


@dataclass(frozen=True)
class Provenance:
    """The source cells behind some cells of a derived table.

    Attributes:
        cells: The first ``limit`` source cells, by row then column order.
        total: How many distinct source cells there are in all.
        rows: Whole source rows the cells rest on without a cell of their own (a
            count of rows that no condition chose), first ``limit``.
        total_rows: How many such rows there are in all.
        untraced: Why some cells map to no source cell (values given to
            ``add_column``, a query that cannot be followed), one sentence each.
    """

    cells: tuple[SourceCell, ...] = ()
    total: int = 0
    rows: tuple[int, ...] = ()
    total_rows: int = 0
    untraced: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Whether every source cell is listed and nothing was untraced."""
        return self.total == len(self.cells) and not self.untraced


@dataclass
class Traced:
    """Cells followed back to a source table: the source, its cells (tagged), what was lost.

    Attributes:
        source: The table the walk ended at.
        refs: The source cells (and whole rows), each tagged with the cell it explains.
        untraced: ``(tags, reason)`` for cells that came from no source cell.
    """

    source: Table
    refs: Refs
    untraced: list[tuple[np.ndarray, str]] = field(default_factory=list)

    def positions(self) -> dict[str, np.ndarray]:
        """Per source column, the sorted distinct row positions of its cited cells."""
        found: dict[str, np.ndarray] = {}
        for column, rows, _ in self.refs.items():
            if column is not ROW:
                found[column] = np.unique(np.concatenate([found.get(column, rows[:0]), rows]))
        return found

    def row_positions(self) -> np.ndarray:
        """The sorted distinct whole rows cited."""
        for column, rows, _ in self.refs.items():
            if column is ROW:
                return np.unique(rows)
        return np.zeros(0, dtype=np.int64)

    def tags_in(self, cells: dict[str, np.ndarray]) -> set[int]:
        """The tags of the traced cells that are among ``cells`` (positions per column)."""
        hit: set[int] = set()
        for column, rows, tags in self.refs.items():
            wanted = cells.get(column) if column is not ROW else None
            if wanted is not None and len(wanted):
                hit.update(tags[np.isin(rows, wanted)].tolist())
        return hit

    def read(self, limit: int = LIMIT) -> Provenance:
        """The source cells with their values: the first ``limit`` read, all counted."""
        source = self.source
        order = {name: i for i, name in enumerate(source.columns)}
        per_column = self.positions()
        total = sum(len(p) for p in per_column.values())
        cited_rows = self.row_positions()
        if per_column:
            rows = np.concatenate(list(per_column.values()))
            cols = np.concatenate([np.full(len(p), order[c]) for c, p in per_column.items()])
            first = np.lexsort((cols, rows))[:limit]
            rows, cols = rows[first], cols[first]
        else:
            rows = cols = np.zeros(0, dtype=np.int64)
        values = source.rows_at(np.unique(rows).tolist())
        index = {int(r): i for i, r in enumerate(np.unique(rows).tolist())}
        names = source.columns
        cells = tuple(
            SourceCell(int(r), names[int(c)], values[index[int(r)]][int(c)])
            for r, c in zip(rows.tolist(), cols.tolist(), strict=True)
        )
        reasons = tuple(dict.fromkeys(reason for _, reason in self.untraced))
        return Provenance(
            cells=cells,
            total=total,
            rows=tuple(int(r) for r in cited_rows[:limit].tolist()),
            total_rows=len(cited_rows),
            untraced=reasons,
        )


def trace_back(table: Table, refs: Refs, *, stop_at: Table | None = None) -> Traced:
    """Follow ``refs`` (cells of ``table``) up its lineage to its source, or to ``stop_at``.

    At each step the operation's declared :class:`~tablereason.table.lineage.Lineage`
    maps the cells to its input; for an operation that keeps rows by a condition, the
    whole rows among them also gain the input cells that decided it.

    Args:
        table: The table the cells belong to.
        refs: Its cells (``ROW`` for whole rows), tagged.
        stop_at: An ancestor to stop at (the walk ends at the source otherwise).
    """
    node = table
    untraced: list[tuple[np.ndarray, str]] = []
    while node.parent is not None and node.step is not None and node is not stop_at:
        operation = find_registered(node.step.operation)
        lineage = operation.lineage
        if lineage is None:
            reason = f"the operation {operation.name} declares no cell lineage"
            untraced.extend((tags, reason) for _, _, tags in refs.items())
            refs = Refs()
        else:
            origin = lineage.cells(node, refs)
            if lineage.decided_by is not None:
                for column, rows, tags in refs.items():
                    if column is ROW:
                        origin.refs.merge(lineage.decided_by(node, rows, tags))
            untraced.extend(origin.untraced)
            refs = origin.refs
        node = node.parent
    return Traced(node, refs, untraced)
