"""The verbs of a :class:`~tablereason.table.Table`: operation methods, apply, replay, provenance.

Each verb (``add_column``, ``select_rows``, ``sort_by``...) calls the one
implementation registered in :data:`tablereason.operations.OPERATIONS`. This module
is the engine's only way up to the operations, and it goes there only when a verb
runs (the operations import the table kernel, so the table cannot import them when
it loads). It also installs the catalog lookup :meth:`Step.from_dict` uses
(:func:`~tablereason.table.lineage.install_operation_lookup`).

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["n"], [["2"], ["1"]])
    >>> t.apply("sort_by", column="n").rows()
    [['1'], ['2']]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from tablereason.errors import RowIndexError
from tablereason.table.lineage import ROW, Refs, Step, install_operation_lookup
from tablereason.table.provenance import LIMIT, Provenance, trace_back
from tablereason.table.storage import to_text

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.operations.catalog import Operation
    from tablereason.table.value import Table


def find_operation(name: str) -> Operation:
    """The registered operation called ``name``.

    Raises:
        UnknownNameError: With the closest registered name and every one there is.
    """
    from tablereason.operations import OPERATIONS  # the one upward arrow (see module notes)

    return OPERATIONS.get(name)


install_operation_lookup(find_operation)


class TableVerbs:
    """The operation methods of :class:`~tablereason.table.Table` (mixed into it).

    Every method returns a new table (``verbalize`` returns text) and leaves this one
    as it is.
    """

    __slots__ = ()

    def apply(self, operation: str, **arguments: Any) -> Any:
        """Apply a registered operation by name with keyword arguments."""
        op = find_operation(operation)
        return op.function(cast("Table", self), op.args(**arguments))

    def add_column(self, name: str, values: Sequence[Any]) -> Table:
        """A copy with one more column, one value per row. An existing name is an error."""
        return self.apply("add_column", name=name, values=[to_text(v) for v in values])

    def select_rows(self, indices: Iterable[int]) -> Table:
        """Rows at these 0-based positions, duplicates removed, in table order."""
        return self.apply("select_rows", indices=list(indices))

    def select_columns(self, names: Iterable[str]) -> Table:
        """These columns, in table order (exact names first, then case-insensitive)."""
        return self.apply("select_columns", names=list(names))

    def group_by(self, column: str) -> Table:
        """A table of ``column`` and ``Count``: one row per distinct value, most frequent first."""
        return self.apply("group_by", column=column)

    def sort_by(self, column: str, descending: bool = False, numeric: bool | None = None) -> Table:
        """Rows sorted by ``column`` (stable); ``numeric=None`` decides from the content."""
        return self.apply("sort_by", column=column, descending=descending, numeric=numeric)

    def lookup_rows(self, terms: Iterable[str], columns: Iterable[str] | None = None) -> Table:
        """Rows where a cell contains any of ``terms`` (case-insensitive)."""
        wanted = None if columns is None else list(columns)
        return self.apply("lookup_rows", terms=list(terms), columns=wanted)

    def lookup_columns(self, terms: Iterable[str]) -> Table:
        """Columns whose name matches one of ``terms`` (unchanged when none does)."""
        return self.apply("lookup_columns", terms=list(terms))

    def verbalize(self, max_rows: int | None = None) -> str:
        """Plain sentences, one per row, naming each column and its value."""
        return str(self.apply("verbalize", max_rows=max_rows))

    def sql(self, query: str, timeout_s: float = 10.0) -> Table:
        """Run one read-only SELECT over this table, referred to as ``t``."""
        return self.apply("sql", query=query, timeout_s=timeout_s)

    def replay(self, steps: Iterable[Step | dict[str, Any]]) -> Table:
        """Apply saved steps (``Step`` or their ``to_dict()`` form) to this table."""
        table = cast("Table", self)
        for raw in steps:
            step = Step.from_dict(raw) if isinstance(raw, dict) else raw
            table = find_operation(step.operation).function(table, step.args)
        return table

    def provenance(self, row: int, column: str | None, *, limit: int = LIMIT) -> Provenance:
        """The cells of the source table that the cell at ``row``, ``column`` came from.

        The walk follows every step back to the table the chain started from (see
        :mod:`tablereason.table.provenance`), so it works the same on a replayed chain.
        ``column=None`` asks about the whole row: the cells that decided it was kept
        (a filter's condition columns), else the row itself (``Provenance.rows``).

        Args:
            row: 0-based position in this table.
            column: A column name (resolved as :meth:`Table.column` does), or ``None``.
            limit: How many source cells to read the values of.

        Raises:
            RowIndexError: For a position outside the table.
            UnknownColumnError: For a column the table lacks.

        Example:
            >>> from tablereason.table import Table
            >>> t = Table.from_records(["city"], [["Oslo"], ["Rome"]])
            >>> t.sort_by("city", descending=True).provenance(0, "city").cells
            (SourceCell(row=1, column='city', value='Rome'),)
        """
        return self.provenance_of([(row, column)], limit=limit)

    def provenance_of(
        self, cells: Iterable[tuple[int, str | None]], *, limit: int = LIMIT
    ) -> Provenance:
        """The source cells behind several cells of this table at once (see :meth:`provenance`).

        Raises:
            RowIndexError: For a position outside the table.
            UnknownColumnError: For a column the table lacks.
        """
        table = cast("Table", self)
        wanted = []
        for row, column in cells:
            if not 0 <= row < table.num_rows:
                raise RowIndexError(
                    f"row position {row} out of range; the table has {table.num_rows} rows"
                )
            wanted.append((row, ROW if column is None else table.column(column).name))
        return trace_back(table, Refs.of(wanted)).read(limit)
