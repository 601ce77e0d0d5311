"""Lineage steps: what made a table from its parent, as data that can be saved and replayed.

A :class:`Step` names a registered operation and holds its typed arguments. Saving
one (:meth:`Step.to_dict`) gives JSON; reading it back (:meth:`Step.from_dict`)
re-validates the arguments against the operation's model. The table layer names no
operation itself: the operation catalog is found through a lookup installed by
:mod:`tablereason.table.verbs` (:func:`install_operation_lookup`), which is the only
module of the engine that reaches the operations.

Example:
    >>> from tablereason.table import Step
    >>> step = Step.from_dict({"operation": "select_rows", "args": {"indices": [0]}})
    >>> step.to_dict()
    {'operation': 'select_rows', 'args': {'indices': [0]}, 'detail': {}}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tablereason.errors import ConfigurationError

OperationLookup = Callable[[str], tuple[str, type[BaseModel]]]
"""Finds a registered operation by name: its registered name and its argument model."""

_lookups: list[OperationLookup] = []


def install_operation_lookup(lookup: OperationLookup) -> None:
    """Install how :meth:`Step.from_dict` finds an operation's argument model.

    :mod:`tablereason.table.verbs` calls this once when it is imported, which happens
    whenever :class:`~tablereason.table.Table` is; a later call replaces the lookup.
    """
    _lookups[:] = [lookup]


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
        if not _lookups:
            raise ConfigurationError(
                "no operation catalog is installed; import tablereason.table first"
            )
        name, args = _lookups[0](data["operation"])
        return cls(
            operation=name,
            args=args.model_validate(data.get("args", {})),
            detail=dict(data.get("detail", {})),
        )
