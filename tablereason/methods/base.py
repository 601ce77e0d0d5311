"""The Method contract: one door, ``run(example) -> Prediction``, for ``ask``, harness and CLI.

A method is built with its LLM (and its options), then answers one
:class:`~tablereason.datasets.Example` at a time. It never raises on a bad model reply:
the failure is in the trace and ``Prediction.error`` (docs/architecture.md).

:class:`TableMethod` adapts methods that read a table and a question (Chain-of-Table,
the program and SQL baselines): they write :meth:`TableMethod.answer`, and ``run``
takes either an example or ``(table, question)``, as users call them in notebooks.

:class:`MethodSpec` is what :data:`tablereason.methods.METHODS` holds: the factory and
which of the run's context (the task, the data folder) it takes, declared instead of
read from signatures.

Example:
    >>> from tablereason.datasets import Example
    >>> from tablereason.trace import Prediction
    >>> class Echo(TableMethod):
    ...     name = "echo"
    ...     def answer(self, table, question, **options):
    ...         return Prediction(answer=table.columns[0] + ": " + question)
    ...     def config(self):
    ...         return {"method": self.name}
    >>> from tablereason.table import Table
    >>> table = Table.from_records(["city"], [["Oslo"]])
    >>> Echo().run(table, "where?").answer
    'city: where?'
    >>> Echo().run(Example.from_table(table, "where?", dataset="ask")).answer
    'city: where?'
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.base import LLM
    from tablereason.table import Table
    from tablereason.trace import Prediction


@runtime_checkable
class Method(Protocol):
    """What every reasoning method is: built with an LLM, run on one example at a time."""

    name: ClassVar[str]

    def run(self, example: Example, /) -> Prediction:
        """Answer one example; the prediction carries the answer and the whole trace."""
        ...

    def config(self) -> dict[str, Any]:
        """The method's configuration, as the harness records it (settings, prompt hashes)."""
        ...


class TableMethod(ABC):
    """A method over a table and a question, runnable on an example or on ``(table, question)``.

    Subclasses write :meth:`answer` and :meth:`config`; :meth:`example_options` passes an
    example's extra fields (TabFact's cleaned statement, TabMWP's unit) to :meth:`answer`.
    """

    name: ClassVar[str]
    takes_several_tables: ClassVar[bool] = False
    """Whether :meth:`answer` also takes a :class:`~tablereason.table.named.TableSet`."""

    def run(
        self, source: Example | Table, question: str | None = None, **options: Any
    ) -> Prediction:
        """Answer a dataset example, or ``question`` over the table ``source``.

        Args:
            source: An :class:`~tablereason.datasets.Example` with a table, or a
                :class:`~tablereason.table.Table`.
            question: The question, when ``source`` is a table.
            **options: With a table: the method's own per-question options.

        Raises:
            ConfigurationError: For an example without a table, or a table without a
                question.
        """
        if isinstance(source, Example):
            if source.table is None:
                raise ConfigurationError(
                    f"method {self.name} needs a table, but {source.dataset} example "
                    f"{source.id!r} has none; pick a method for this dataset"
                )
            extra = {**self.example_options(source), **options}
            return self.answer(source.table, source.question, **extra)
        if question is None:
            raise ConfigurationError(f"{self.name}.run(table, question) needs the question")
        return self.answer(source, question, **options)

    def example_options(self, example: Example) -> dict[str, Any]:
        """Per-question options read from an example's fields; none by default."""
        return {}

    @abstractmethod
    def answer(self, table: Table, question: str, **options: Any) -> Prediction:
        """Answer ``question`` over ``table``."""

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The method's configuration (see :meth:`Method.config`)."""


@dataclass(frozen=True)
class MethodSpec:
    """A registered method: how to build it and which run context it takes.

    Attributes:
        factory: Builds the method from the LLM and keyword options.
        takes_task: Whether the factory takes ``task`` (``"wikitq"``, ``"tabfact"``...).
        takes_data_dir: Whether it takes ``data_dir`` (the run's data folder, for tools
            that read dataset files).
    """

    factory: Callable[..., Method]
    takes_task: bool = False
    takes_data_dir: bool = False

    def build(
        self,
        llm: LLM,
        *,
        task: str | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        registered_as: str | None = None,
        **options: Any,
    ) -> Method:
        """The method for ``llm``; ``task`` and ``data_dir`` go only where declared.

        ``registered_as`` is the name the error messages use (the factory's own name when
        None).

        Raises:
            ConfigurationError: For options the factory does not accept.
        """
        kwargs = dict(options)
        if task is not None and self.takes_task:
            kwargs.setdefault("task", task)
        if data_dir is not None and self.takes_data_dir:
            kwargs.setdefault("data_dir", str(data_dir))
        try:
            return self.factory(llm, **kwargs)
        except TypeError as err:
            name = registered_as or getattr(
                self.factory, "name", getattr(self.factory, "__name__", "method")
            )
            raise ConfigurationError(
                f"method {name!r} does not accept these options {sorted(kwargs)}: {err}"
            ) from None
