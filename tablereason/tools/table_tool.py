"""The Table tool: ask a question about a registered table, answered by Chain-of-Table.

Text reasoning (ReWOO, ReAct, Chameleon) reaches the table engine through this
tool. The input is ``name: question``, or just the question when one table is
registered. The reasoner is any object with ``run(table, question) -> Prediction``;
by default Chain-of-Table in its WikiTQ (short answer) task.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.table import Table  # doctest: +SKIP
    >>> t = Table.from_records(["city", "pop"], [["Oslo", "700"]])  # doctest: +SKIP
    >>> TableTool(ScriptedLLM(replies=[]), {"cities": t}).name  # doctest: +SKIP
    'Table'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from tablereason.errors import ConfigurationError, did_you_mean
from tablereason.llm.base import LLM, Usage
from tablereason.tools.base import BaseTool, ToolFailure

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import Prediction


class TableReasoner(Protocol):
    """What the Table tool needs: a method that answers a question over a table."""

    def run(self, table: Table, question: str) -> Prediction:
        """Answer ``question`` over ``table``."""
        ...


def chain_of_table(llm: LLM, **settings: Any) -> TableReasoner:
    """The default reasoner: Chain-of-Table with the WikiTQ task (short answers).

    The import is local so that ``tablereason.tools`` does not load the methods layer
    unless a Table tool is actually built.
    """
    from tablereason.methods.chain_of_table.method import ChainOfTable

    return ChainOfTable(llm, task="wikitq", **settings)


class TableTool(BaseTool):
    """Answer a question about one of the registered tables.

    Args:
        llm: The model the default reasoner uses (ignored when ``reasoner`` is given).
        tables: Registered tables by name.
        reasoner: Anything with ``run(table, question) -> Prediction``.
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
        name: str | None = None,
    ) -> None:
        if reasoner is None and llm is None:
            raise ConfigurationError("the Table tool needs a model (llm=...) or a reasoner")
        self.tables = dict(tables)
        self._llm = llm
        self._reasoner = reasoner
        if name:
            self.name = name
        if self.tables:
            self.description += " Tables: " + ", ".join(self.tables) + "."

    @property
    def reasoner(self) -> TableReasoner:
        """The reasoner (built on first use)."""
        if self._reasoner is None:
            assert self._llm is not None  # checked in __init__
            self._reasoner = chain_of_table(self._llm)
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
