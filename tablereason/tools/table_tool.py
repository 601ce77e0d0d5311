"""The Table tool: ask a question about a registered table, answered by a table reasoner.

Text reasoning (ReWOO, ReAct, Chameleon) reaches the table engine through this
tool. The input is ``name: question``, or just the question when one table is
registered. The reasoner is any object with ``run(table, question) -> Prediction``,
given to the tool (``reasoner=``), built from the model by a factory
(``make_reasoner=``), or else built by the factory registered as
:data:`DEFAULT_TABLE_REASONER` in :data:`TABLE_REASONERS`. The tools layer imports no
method: the methods layer registers Chain-of-Table (WikiTQ task, short answers) there.

Example:
    >>> from tablereason.table import Table
    >>> from tablereason.trace import Prediction
    >>> class Rows:
    ...     def run(self, table, question):
    ...         return Prediction(answer=str(table.num_rows))
    >>> t = Table.from_records(["city", "pop"], [["Oslo", "700"]])
    >>> TableTool(None, {"cities": t}, reasoner=Rows())("cities: how many rows?")
    '1'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from tablereason.errors import ConfigurationError, did_you_mean
from tablereason.llm.base import LLM, Usage
from tablereason.registry import Registry
from tablereason.tools.base import BaseTool, ToolFailure

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import Prediction


class TableReasoner(Protocol):
    """What the Table tool needs: a method that answers a question over a table."""

    def run(self, table: Table, question: str, /) -> Prediction:
        """Answer ``question`` over ``table``."""
        ...


ReasonerFactory = Callable[[LLM], TableReasoner]
"""Builds a table reasoner from a model."""

TABLE_REASONERS: Registry[ReasonerFactory] = Registry("table reasoner")
"""Table reasoner factories by name; the methods layer registers ``chain_of_table``."""

DEFAULT_TABLE_REASONER = "chain_of_table"
"""The registered factory a Table tool uses when it is given neither reasoner nor factory."""


def default_reasoner(llm: LLM) -> TableReasoner:
    """The reasoner built by the factory registered as :data:`DEFAULT_TABLE_REASONER`.

    Raises:
        ConfigurationError: When nothing is registered under that name (the methods
            layer, :mod:`tablereason.methods`, was not imported).
    """
    if DEFAULT_TABLE_REASONER not in TABLE_REASONERS:
        raise ConfigurationError(
            f"no {DEFAULT_TABLE_REASONER!r} table reasoner is registered: import "
            "tablereason.methods (it registers Chain-of-Table), or give the Table tool "
            "reasoner=... or make_reasoner=..."
        )
    return TABLE_REASONERS.get(DEFAULT_TABLE_REASONER)(llm)


class TableTool(BaseTool):
    """Answer a question about one of the registered tables.

    Args:
        llm: The model the reasoner is built from (ignored when ``reasoner`` is given).
        tables: Registered tables by name.
        reasoner: Anything with ``run(table, question) -> Prediction``.
        make_reasoner: Builds the reasoner from ``llm`` on first use; the registered
            default (:func:`default_reasoner`) when None.
        name: Tool name shown to the model.
    """

    name = "Table"
    description = (
        "Answers a question about a data table by reasoning over its rows. Input: "
        "'<table name>: <question>', or only the question when there is one table."
    )

    def __init__(
        self,
        llm: LLM | None,
        tables: Mapping[str, Table],
        *,
        reasoner: TableReasoner | None = None,
        make_reasoner: ReasonerFactory | None = None,
        name: str | None = None,
    ) -> None:
        if reasoner is None and llm is None:
            raise ConfigurationError("the Table tool needs a model (llm=...) or a reasoner")
        self.tables = dict(tables)
        self._llm = llm
        self._reasoner = reasoner
        self._make_reasoner = make_reasoner or default_reasoner
        if name:
            self.name = name
        if self.tables:
            self.description += " Tables: " + ", ".join(self.tables) + "."

    @property
    def reasoner(self) -> TableReasoner:
        """The reasoner (built on first use)."""
        if self._reasoner is None:
            assert self._llm is not None  # checked in __init__
            self._reasoner = self._make_reasoner(self._llm)
        return self._reasoner

    def register(self, name: str, table: Table) -> None:
        """Add or replace a table."""
        self.tables[name] = table

    def _split(self, text: str) -> tuple[Table, str]:
        if not self.tables:
            raise ToolFailure("no table is registered")
        head, sep, rest = text.partition(":")
        if sep and head.strip() in self.tables:
            return self.tables[head.strip()], rest.strip()
        if len(self.tables) == 1:
            return next(iter(self.tables.values())), text
        raise ToolFailure(
            "say which table: " + did_you_mean(head.strip(), self.tables, kind="table")
        )

    def run(self, text: str) -> tuple[str, Usage]:
        """Run the reasoner on the chosen table."""
        table, question = self._split(text)
        if not question:
            raise ToolFailure("the question is empty")
        prediction = self.reasoner.run(table, question)
        usage = prediction.trace.usage
        answer = prediction.answer
        shown = ", ".join(answer) if isinstance(answer, list) else answer
        if prediction.error or not shown.strip():
            raise ToolFailure(
                f"the table reasoner found no answer ({prediction.error or 'empty answer'})",
                usage=usage,
            )
        return shown, usage
