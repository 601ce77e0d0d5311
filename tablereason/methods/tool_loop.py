"""The run the tool-using methods (ReWOO, ReAct) share: tools, attempts, reset and failure.

:class:`ToolMethod` holds what the two have in common: the task and its tools (given,
the task's defaults, or for a table task the SQL and Python tools built for each
question over its tables), the door every model call goes through, and :meth:`run`:
what it was given becomes a :class:`~tablereason.methods.tool_tasks.Subject`, each
attempt starts with every tool reset (a document search forgets its document), an
attempt that fails the way the reference fails (:class:`RunFailed`, or any error of
the package) is recorded as an ``error`` step and the next attempt runs, and when
none is left the prediction has an empty answer and the last error. A subclass writes
:meth:`ToolMethod.attempt`, one attempt's model calls and tool calls.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.tools import Calculator
    >>> class Once(ToolMethod):
    ...     name = "once"
    ...     prompt_folder = "react"
    ...     def attempt(self, subject, tools, trace, attempt):
    ...         if attempt == 1:
    ...             raise RunFailed("the first try fails")
    ...         return tools[0](subject.question)
    >>> method = Once(ScriptedLLM(replies=[]), [Calculator()], settings=Settings(attempts=2))
    >>> prediction = method.run("2 + 2")
    >>> prediction.answer, [step.kind for step in prediction.trace.steps]
    ('4', ['error'])
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict, Field

from tablereason.calls import Door
from tablereason.calls.sampling import SamplingSettings
from tablereason.errors import TableReasonError
from tablereason.llm.base import LLM
from tablereason.methods.tool_tasks import (
    TABLE_TASKS,
    Subject,
    TextTask,
    check_task,
    default_tools,
    subject_of,
    table_tools,
)
from tablereason.prompts.render import template_hash, template_names
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets import Example
    from tablereason.table.value import Table
    from tablereason.tools.base import Tool


class RunFailed(TableReasonError):
    """An attempt failed the way the reference fails (the paper profiles retry)."""


class Settings(SamplingSettings):
    """The fields :meth:`ToolMethod.run` reads of a method's settings.

    Attributes:
        profile: The profile's name, recorded in the trace's method.
        attempts: Whole-run attempts when an attempt fails.
        constrain: Send each decision's constraint to models that enforce it.
        temperature: Every request's temperature (``None``: each call's own).
        top_p: Nucleus sampling bound of every request.
        seed: Seed of sampled requests.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: str = "default"
    attempts: int = Field(default=1, ge=1)
    constrain: bool = True


def reset_tools(tools: Sequence[Tool]) -> None:
    """Make every tool forget the last question (those that remember one have ``reset``).

    Example:
        >>> from tablereason.tools import Calculator
        >>> reset_tools([Calculator()])  # a calculator remembers nothing: left as it is
    """
    for tool in tools:
        reset = getattr(tool, "reset", None)
        if callable(reset):
            reset()


class ToolMethod(ABC):
    """A method that calls tools: the shared run, its attempts and its failure.

    Args:
        llm: Any backend of the LLM protocol.
        tools: The tools; None: the task's defaults (see
            :func:`~tablereason.methods.tool_tasks.default_tools`), or for a table task
            the SQL and Python tools over each question's tables.
        task: A task of :data:`~tablereason.methods.tool_tasks.TASKS`.
        data_dir: Data folder the default tools read.
        settings: The method's settings (at least the fields of :class:`Settings`).
        react: The default tools are ReAct's (``Search`` and ``Lookup``).
    """

    name: ClassVar[str]
    prompt_folder: ClassVar[str]
    takes_several_tables: ClassVar[bool] = True
    """A table task reads one table or several (``run({"a": t1, "b": t2}, question)``)."""

    def __init__(
        self,
        llm: LLM,
        tools: Sequence[Tool] | None = None,
        *,
        task: str = "hotpotqa",
        data_dir: str | None = None,
        settings: Any = None,
        react: bool = False,
    ) -> None:
        self.llm = llm
        self.task: TextTask = check_task(task)
        self.settings = settings if settings is not None else Settings()
        self.given_tools = tools is not None
        self.tools: list[Tool] = (
            list(tools)
            if tools is not None
            else default_tools(self.task, llm, react=react, data_dir=data_dir)
        )
        self.door = Door(
            llm, site=self.name, constrain=self.settings.constrain,
            sampling=self.settings.sampling(),
        )  # fmt: skip

    @property
    def table_task(self) -> bool:
        """Whether the task asks about the user's tables."""
        return self.task in TABLE_TASKS

    def tools_for(self, subject: Subject) -> list[Tool]:
        """The tools of one question: those given, or the table tools over its tables."""
        if self.given_tools or subject.tables is None:
            return self.tools
        return table_tools(subject.tables)

    def tool_names(self) -> list[str]:
        """The names of the tools, as the run configuration records them."""
        if self.table_task and not self.given_tools:
            return ["SQL", "Python"]
        return [t.name for t in self.tools]

    def config(self) -> dict[str, Any]:
        """Task, settings, tools and a hash of every prompt template."""
        return {
            "method": self.name,
            "task": self.task,
            "settings": self.settings.model_dump(),
            "tools": self.tool_names(),
            "prompts": {n: template_hash(n) for n in template_names(self.prompt_folder)},
        }

    def __call__(self, example: Example | str) -> Prediction:
        """Same as :meth:`run`, for code that calls the method as a function."""
        return self.run(example)

    def run(
        self,
        source: Example | str | Table | Mapping[str, Table],
        question: str | None = None,
    ) -> Prediction:
        """Answer an example, a bare question, or ``question`` over a table or named tables.

        Returns:
            The answer and a trace of every model call and tool call (a table task's
            first step is its input table). Never raises on a bad model answer; when
            every attempt fails, ``Prediction.error`` has the last failure.

        Raises:
            ConfigurationError: For a table given to a text task, a table task without
                a table, or a table without a question.
        """
        subject = subject_of(source, question, self.task)
        tools = self.tools_for(subject)
        trace = Trace(method=f"{self.name}/{self.settings.profile}", question=subject.question)
        if subject.input_table is not None:
            trace.add(TraceStep(kind="input", name="table", table=subject.input_table))
        last_error = ""
        for attempt in range(1, self.settings.attempts + 1):
            reset_tools(tools)
            try:
                answer = self.attempt(subject, tools, trace, attempt)
            except TableReasonError as err:  # RunFailed included
                last_error = f"attempt {attempt}: {type(err).__name__}: {err}"
                trace.add(TraceStep(kind="error", name=type(err).__name__, error=last_error))
                continue
            return Prediction(answer=answer, trace=trace)
        return Prediction(answer="", trace=trace, error=last_error)

    @abstractmethod
    def attempt(self, subject: Subject, tools: list[Tool], trace: Trace, attempt: int) -> str:
        """One attempt: its model and tool calls recorded in ``trace``; the answer.

        Raises:
            RunFailed: When the attempt fails the way the reference fails.
        """
