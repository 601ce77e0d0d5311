"""Lineage: what made a table from its parent, and where each of its cells came from.

A :class:`Step` names a registered operation and holds its typed arguments. Saving
one (:meth:`Step.to_dict`) gives JSON; reading it back (:meth:`Step.from_dict`)
re-validates the arguments against the operation's model. The table layer names no
operation itself: the operation catalog is found through a lookup installed by
:mod:`tablereason.table.verbs` (:func:`install_operation_lookup`), which is the only
module of the engine that reaches the operations.

Every operation also declares its cell lineage where it is registered: a
:class:`Lineage` maps cells of its result (:class:`Refs`: row positions per column,
``ROW`` for whole rows) to the cells of its parent they came from, and may say which
parent cells decided that a row was kept (a filter's condition columns).
:mod:`tablereason.table.provenance` follows these maps from any table back to its
source. :func:`kept_cells` is the map of every operation that keeps rows and
columns as they are (selections, sorts, filters): a cell maps to itself.

Example:
    >>> from tablereason.table import Step
    >>> step = Step.from_dict({"operation": "select_rows", "args": {"indices": [0]}})
    >>> step.to_dict()
    {'operation': 'select_rows', 'args': {'indices': [0]}, 'detail': {}}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tablereason.errors import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

ROW: None = None
"""The column key of a whole row in :class:`Refs` (a count counts rows, not cells)."""


class Refs:
    """Cells of one table, each carrying a tag: per column, row positions and tags.

    The key :data:`ROW` stands for whole rows. A tag says which cell asked about this
    one, so that one walk back through a chain answers for many cells at once.

    Example:
        >>> refs = Refs.of([(0, "a"), (2, "a"), (1, None)])
        >>> [(c, r.tolist(), t.tolist()) for c, r, t in refs.items()]
        [('a', [0, 2], [0, 1]), (None, [1], [2])]
    """

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: dict[str | None, list[tuple[np.ndarray, np.ndarray]]] = {}

    @classmethod
    def of(cls, cells: Iterable[tuple[int, str | None]]) -> Refs:
        """Refs of ``(row, column)`` cells, tagged by their order (0, 1, ...)."""
        refs = cls()
        by_column: dict[str | None, tuple[list[int], list[int]]] = {}
        for tag, (row, column) in enumerate(cells):
            rows, tags = by_column.setdefault(column, ([], []))
            rows.append(int(row))
            tags.append(tag)
        for column, (rows, tags) in by_column.items():
            refs.add(column, np.asarray(rows, dtype=np.int64), np.asarray(tags, dtype=np.int64))
        return refs

    def add(self, column: str | None, rows: np.ndarray, tags: np.ndarray) -> None:
        """Add cells of ``column`` (``ROW``: whole rows) at ``rows``, with their ``tags``."""
        if len(rows):
            self._parts.setdefault(column, []).append(
                (np.asarray(rows, dtype=np.int64), np.asarray(tags, dtype=np.int64))
            )

    def merge(self, other: Refs) -> None:
        """Add every cell of ``other``."""
        for column, rows, tags in other.items():
            self.add(column, rows, tags)

    def items(self) -> Iterator[tuple[str | None, np.ndarray, np.ndarray]]:
        """``(column, rows, tags)`` per column, in the order columns were first added."""
        for column, parts in self._parts.items():
            if len(parts) == 1:
                yield column, parts[0][0], parts[0][1]
            else:
                yield (
                    column,
                    np.concatenate([p[0] for p in parts]),
                    np.concatenate([p[1] for p in parts]),
                )

    def columns(self) -> list[str | None]:
        """The columns that have cells (``ROW`` included when rows do)."""
        return list(self._parts)

    def size(self) -> int:
        """How many (row, column, tag) entries there are."""
        return sum(len(rows) for parts in self._parts.values() for rows, _ in parts)

    def __bool__(self) -> bool:
        return bool(self._parts)


@dataclass
class Origin:
    """Where some cells of a table came from in its parent.

    Attributes:
        refs: The parent's cells, with the tags of the cells they explain.
        untraced: Cells that come from no cell of the parent: ``(tags, reason)``.
    """

    refs: Refs = field(default_factory=Refs)
    untraced: list[tuple[np.ndarray, str]] = field(default_factory=list)


CellMap = Callable[["Table", Refs], Origin]
"""``cells(child, refs) -> Origin``: the parent cells behind cells of ``child``."""
RowReasons = Callable[["Table", np.ndarray, np.ndarray], Refs]
"""``decided_by(child, parent_rows, tags) -> Refs``: parent cells that kept those rows."""


@dataclass(frozen=True)
class Lineage:
    """How an operation's result cells map to its input cells (declared where it registers).

    Attributes:
        cells: The map from result cells (and whole rows) to input cells.
        decided_by: For operations that keep rows by a condition, the input cells that
            decided it (the columns a filter's condition reads), for whole rows.
        summary: One line saying what the map is, for the docs and the catalog.
    """

    cells: CellMap
    summary: str
    decided_by: RowReasons | None = None


class RegisteredOperation(Protocol):
    """What the table layer reads of a registered operation."""

    @property
    def name(self) -> str: ...  # noqa: D102

    @property
    def args(self) -> type[BaseModel]: ...  # noqa: D102

    @property
    def lineage(self) -> Lineage | None: ...  # noqa: D102


OperationLookup = Callable[[str], RegisteredOperation]
"""Finds a registered operation by name."""

_lookups: list[OperationLookup] = []


def install_operation_lookup(lookup: OperationLookup) -> None:
    """Install how :meth:`Step.from_dict` and lineage find an operation by name.

    :mod:`tablereason.table.verbs` calls this once when it is imported, which happens
    whenever :class:`~tablereason.table.Table` is; a later call replaces the lookup.
    """
    _lookups[:] = [lookup]


def find_registered(name: str) -> RegisteredOperation:
    """The registered operation ``name``, through the installed lookup.

    Raises:
        ConfigurationError: When no catalog is installed.
        UnknownNameError: If no operation of that name is registered.
    """
    if not _lookups:
        raise ConfigurationError(
            "no operation catalog is installed; import tablereason.table first"
        )
    return _lookups[0](name)


def parent_positions(child: Table, rows: np.ndarray) -> np.ndarray:
    """The positions in ``child.parent`` of the rows at ``rows`` of ``child``.

    Both tables must order rows of the same physical table (``kernel.base``), as every
    operation that keeps rows does: a row is then the same row id in both.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["a"], [["x"], ["y"], ["z"]])
        >>> u = t.sort_by("a", descending=True).select_rows([0, 2])
        >>> parent_positions(u, np.array([0, 1])).tolist()
        [0, 2]
    """
    parent = child.parent
    if parent is None or parent.kernel.base != child.kernel.base:
        raise ConfigurationError("parent_positions needs a child over its parent's rows")
    rids = child.kernel.row_ids()[rows]
    order = parent.kernel.row_order
    if order is None:  # the parent holds every base row in order: position is the row id
        return rids
    inverse = np.full(int(order.max()) + 1 if len(order) else 0, -1, dtype=np.int64)
    inverse[order] = np.arange(len(order), dtype=np.int64)
    return inverse[rids]


def kept_cells(child: Table, refs: Refs) -> Origin:
    """The map of operations that keep rows and columns: each cell maps to itself.

    Rows are followed by their row ids, columns by name (a kept column has the same
    name in the parent); a whole row maps to the same row.
    """
    parent = child.parent
    assert parent is not None  # only called for a child
    names = set(parent.columns)
    origin = Origin()
    for column, rows, tags in refs.items():
        if column is not None and column not in names:
            origin.untraced.append((tags, f"column {column!r} is not in the table it came from"))
            continue
        origin.refs.add(column, parent_positions(child, rows), tags)
    return origin


def cells_in(child: Table, columns: Iterable[str], rows: np.ndarray, tags: np.ndarray) -> Refs:
    """The cells of ``columns`` of ``child.parent`` in the rows that ``rows`` of ``child`` are.

    What a row-keeping operation's ``decided_by`` returns: for a filter, the cells of
    the columns its condition reads.
    """
    refs = Refs()
    at = parent_positions(child, rows)
    for column in columns:
        refs.add(column, at, tags)
    return refs


KEPT = Lineage(kept_cells, "each kept cell maps to itself (rows by row id, columns by name)")
"""The lineage of operations that keep (some of) their input's rows and columns."""


class Step(BaseModel):
    """One lineage step: the operation's registered name and its typed arguments.

    ``detail`` records decisions the operation took on its own (for example
    whether a sort read cells as numbers); it is informative only.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    operation: str
    args: BaseModel
    detail: dict[str, Any] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: ``{"operation", "args", "detail"}``."""
        return {
            "operation": self.operation,
            "args": self.args.model_dump(mode="json"),
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        """Rebuild a step saved with :meth:`to_dict`; arguments are re-validated.

        Raises:
            UnknownNameError: If no operation of that name is registered.
            pydantic.ValidationError: If the arguments do not fit the operation.
        """
        operation = find_registered(data["operation"])
        return cls(
            operation=operation.name,
            args=operation.args.model_validate(data.get("args", {})),
            detail=dict(data.get("detail", {})),
        )
