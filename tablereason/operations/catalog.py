"""The operation catalog: every atomic table operation, registered by name.

Planners, parsers, the CLI and tests read names, argument models and
descriptions from :data:`OPERATIONS`. Each operation that returns a table also
declares its cell lineage (:class:`~tablereason.table.lineage.Lineage`) here, where
it registers: how the cells of its result map to the cells of its input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from tablereason.registry import Registry
from tablereason.table.lineage import Lineage

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


class OperationArgs(BaseModel):
    """Base of every operation's arguments: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class Operation:
    """A registered operation.

    Attributes:
        name: Registered name (``"sort_by"``).
        args: The frozen pydantic model of its arguments.
        function: The pure function ``(Table, args) -> Table`` (or text).
        description: One line, used in planner prompts and ``--help``.
        returns: ``"table"`` or ``"text"``.
        lineage: Where each cell of the result came from (every table-returning
            operation declares one; ``None`` for text).
    """

    name: str
    args: type[OperationArgs]
    function: Callable[[Table, Any], Any]
    description: str
    returns: Literal["table", "text"] = "table"
    lineage: Lineage | None = None


OPERATIONS: Registry[Operation] = Registry("operation")


def operation(
    name: str,
    args: type[OperationArgs],
    description: str,
    returns: Literal["table", "text"] = "table",
    *,
    lineage: Lineage | None = None,
) -> Callable[[Callable[[Table, Any], Any]], Callable[[Table, Any], Any]]:
    """Decorator that registers a function as the operation ``name``, with its lineage."""

    def register(function: Callable[[Table, Any], Any]) -> Callable[[Table, Any], Any]:
        OPERATIONS.register(
            name, Operation(name, args, function, description, returns, lineage=lineage)
        )
        return function

    return register
