"""The table kernel: everything an operation may use of a :class:`~tablereason.table.Table`.

Operations (:mod:`tablereason.operations`) compute on a table through
``table.kernel``, a :class:`Kernel`, and through the table's public reading methods
(``columns``, ``column()``, ``rows()``...); they never touch its private members.
The kernel is small on purpose:

* **storage**: :attr:`Kernel.store` (the DuckDB store the table's family shares),
  :attr:`Kernel.base`, :attr:`Kernel.refs` (where each column's cells live) and
  :meth:`Kernel.scan` (the rows as a SQL relation to build queries on);
* **row order**: :meth:`Kernel.row_ids` and :attr:`Kernel.row_order`;
* **cells held in Python** (small tables): :meth:`Kernel.cells`,
  :meth:`Kernel.held_cells`, :meth:`Kernel.is_small`, :meth:`Kernel.position`;
* **children**: :meth:`Kernel.derive`, :meth:`Kernel.from_columns`,
  :meth:`Kernel.from_query`, and :meth:`Kernel.source_from_query` for a new source.

What it guarantees:

* **Row order.** A table is an ordered list of base row ids (hidden ``__rid`` values
  of the physical table :attr:`~Kernel.base`); the row at position ``i`` is
  ``row_ids()[i]``. In a :meth:`~Kernel.scan`, ``scan.pos`` is that position and
  ``scan.rid`` the row id; queries that return rows must order by ``scan.pos``.
* **Immutability.** Nothing here changes the table. Arrays and cell lists it returns
  are shared with the table and must not be modified; every change is a new table.
* **Lineage.** Every child constructor returns a new table whose ``parent`` is this
  table and whose ``step`` is the step given, with this table's caption, in this
  table's store. Only :meth:`~Kernel.source_from_query` starts a new lineage.

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["a"], [["x"], ["y"], ["z"]])
    >>> k = t.kernel
    >>> k.row_ids().tolist(), k.cells()
    ([0, 1, 2], [['x'], ['y'], ['z']])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from tablereason.table import formats, storage
from tablereason.table.relation import Column, Scan, sources
from tablereason.table.storage import Store

if TYPE_CHECKING:  # pragma: no cover
    from sqlglot import exp

    from tablereason.table.lineage import Step
    from tablereason.table.value import Table


class Kernel:
    """The declared interface between one table and the operations that compute on it.

    Obtained as ``table.kernel``; cheap to make, holds nothing but the table.

    Args:
        table: The table this kernel reads and derives from.
    """

    __slots__ = ("_table",)

    def __init__(self, table: Table) -> None:
        self._table = table

    # -- storage -----------------------------------------------------------------------

    @property
    def table(self) -> Table:
        """The table this kernel belongs to."""
        return self._table

    @property
    def store(self) -> Store:
        """The DuckDB store shared by the table, its source and every table derived from them."""
        return self._table._store

    @property
    def base(self) -> str:
        """The physical table whose row ids (``__rid``) order this table's rows."""
        return self._table._base

    @property
    def refs(self) -> tuple[Column, ...]:
        """Every column in order: display name, label, and the storage of its cells."""
        return self._table._columns

    @contextmanager
    def scan(self, *extra: Column, what: str | None = None) -> Iterator[Scan]:
        """The rows as a SQL relation (writing pending small tables to DuckDB first).

        Build queries with ``scan.select(...)``, ``scan.cell(name)``, ``scan.pos``
        and ``scan.rid``, and run them on :attr:`store` inside the ``with`` block: the
        row-order relation exists only there. ``extra`` columns (computed from this
        table's columns, read with ``scan.value(column)``) join the relation.

        When the relation holds a computed column, every query of the block runs under
        the computed columns' time limit, and a DuckDB failure in it is a
        :class:`~tablereason.errors.SQLError` naming ``what`` (by default the
        computed columns).
        """
        t = self._table
        columns = [*t._columns, *extra]
        t._store.require([t._base, *sources(columns)])
        with t._store.order(t._rows) as order:
            scan = Scan(t._base, columns, order)
            seconds = scan.seconds
            if seconds is None:
                yield scan
                return
            if what is None:
                names = [c.name for c in columns if c.computed is not None]
                what = (
                    "reading the computed column"
                    + ("s " if len(names) > 1 else " ")
                    + (", ".join(repr(n) for n in names))
                )
            with t._store.limited(seconds, what):
                yield scan

    # -- row order ---------------------------------------------------------------------

    @property
    def row_order(self) -> np.ndarray | None:
        """The row ids in table order, or ``None`` when the table has every base row in order.

        The same array object for as long as the table lives (a stable cache key).
        """
        return self._table._rows

    def row_ids(self) -> np.ndarray:
        """Base row ids in table order: position ``i`` holds row ``row_ids()[i]``."""
        rows = self._table._rows
        return rows if rows is not None else np.arange(self._table._n, dtype=np.int64)

    # -- cells held in Python ----------------------------------------------------------

    def is_small(self) -> bool:
        """True when the table has at most :data:`~tablereason.table.storage.SMALL_CELLS` cells."""
        t = self._table
        return t._n * len(t._columns) <= storage.SMALL_CELLS

    def held_cells(self) -> list[list[str]] | None:
        """The cells of a small table when Python already holds them (never runs a query)."""
        records = self._table._records
        return records if records is not None and self.is_small() else None

    def cells(self) -> list[list[str]] | None:
        """The cells of a small table in table order, read once if needed; ``None`` if large.

        Operations use this to choose their Python path over DuckDB.
        """
        if not self.is_small():
            return None
        t = self._table
        if t._records is None:
            t._records = t._fetch(None)
        return t._records

    def position(self, name: str) -> int:
        """Index of the column ``name`` resolves to (as :meth:`Table.column` resolves it)."""
        return self._table._columns.index(self._table.column(name))

    # -- children ----------------------------------------------------------------------

    def derive(
        self,
        step: Step,
        *,
        rows: np.ndarray | bool | None = False,
        columns: Sequence[Column] | None = None,
        records: list[list[str]] | None = None,
    ) -> Table:
        """A child sharing this table's storage, with new rows and/or new columns.

        Args:
            step: What made the child.
            rows: The child's row ids in order; ``None`` for every base row in base
                order; ``False`` (default) to keep this table's rows.
            columns: The child's columns (default: this table's).
            records: The child's cells in order, when Python holds them (small tables).
        """
        t = self._table
        new_rows = t._rows if rows is False else rows
        if not (new_rows is None or isinstance(new_rows, np.ndarray)):
            raise TypeError("rows must be an array of row ids, None or False")
        n = t._n if new_rows is None else len(new_rows)
        return type(t)(
            t._store,
            t._base,
            t._columns if columns is None else columns,
            new_rows,
            n,
            caption=t.caption,
            parent=t,
            step=step,
            records=records,
        )

    def from_query(self, step: Step, labels: list[str], select: exp.Select) -> Table:
        """A child over the stored result of ``select`` (columns ``__rid, c0, c1, ...``)."""
        base, n_rows = self.store.add_query(select)
        t = self._table
        return over_base(type(t), t._store, base, labels, n_rows, t.caption, parent=t, step=step)

    def from_columns(
        self, step: Step, labels: list[str], columns: Sequence[Sequence[str]], n_rows: int
    ) -> Table:
        """A child over new storage holding ``columns`` (group and SQL results).

        A small result also keeps its cells in Python.
        """
        t = self._table
        base = t._store.add_base(columns, n_rows)
        child = over_base(type(t), t._store, base, labels, n_rows, t.caption, parent=t, step=step)
        if child.kernel.is_small():
            child._records = [list(r) for r in zip(*columns, strict=True)]
        return child

    def source_from_query(
        self, labels: list[str], select: exp.Select, caption: str | None
    ) -> Table:
        """A new source table (no parent, no step) over the stored result of ``select``.

        It lives in this table's store; ``select`` returns ``__rid, c0, c1, ...``.
        """
        base, n_rows = self.store.add_query(select)
        return over_base(type(self._table), self.store, base, labels, n_rows, caption)


def over_base(
    cls: type[Table],
    store: Store,
    base: str,
    labels: list[str],
    n_rows: int,
    caption: str | None,
    *,
    parent: Table | None = None,
    step: Step | None = None,
) -> Table:
    """A table of every row of the physical table ``base`` (fields ``c0, c1, ...``)."""
    names = formats.unique_names(labels)
    columns = [
        Column(n, lab, base, f"c{i}") for i, (n, lab) in enumerate(zip(names, labels, strict=True))
    ]
    return cls(store, base, columns, None, n_rows, caption=caption, parent=parent, step=step)


def append_rows(store: Store, base: str, width: int, start: int, rows: list[list[str]]) -> int:
    """Append text rows to the physical table ``base`` as rows ``start, start + 1, ...``.

    Rows shorter than the table are padded with empty cells; a longer one widens it.

    Returns:
        The table's width afterwards.
    """
    widest = max(len(r) for r in rows)
    for i in range(width, widest):
        store.add_field(base, f"c{i}")
    width = max(width, widest)
    columns = [[r[i] if i < len(r) else "" for r in rows] for i in range(width)]
    store.append(base, np.arange(start, start + len(rows), dtype=np.int64), columns)
    return width
