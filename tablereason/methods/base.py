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

import importlib
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
    takes_task: ClassVar[bool] = False
    """Whether the method is built with the run's ``task`` (see :class:`MethodSpec`)."""
    takes_data_dir: ClassVar[bool] = False
    """Whether the method is built with the run's ``data_dir``."""
    takes_several_tables: ClassVar[bool] = False
    """Whether :meth:`answer` also takes a :class:`~tablereason.table.named.TableSet`."""

    def run(
        self, source: Example | Table, question: str | None = None, **options: Any
    ) -> Prediction:
        """Answer a dataset example, or ``question`` over the table ``source``.

        An example's table is read as it is held: a live table (or several named ones)
        that :meth:`~tablereason.datasets.Example.from_table` wrapped is never copied.

        Args:
            source: An :class:`~tablereason.datasets.Example` with a table (or several
                named tables, for a method that takes several), or a
                :class:`~tablereason.table.Table`.
            question: The question, when ``source`` is a table.
            **options: The method's own per-question options.

        Raises:
            ConfigurationError: For an example without a table, several tables given to a
                method that takes one, or a table without a question.
        """
        if not isinstance(source, Example):
            if question is None:
                raise ConfigurationError(f"{self.name}.run(table, question) needs the question")
            source = Example.from_table(source, question, dataset="ask")
        tables = source.tables
        if tables is not None and not self.takes_several_tables:
            raise ConfigurationError(
                f"{self.name} answers over one table, and {len(tables)} named tables were "
                "given; ask about one table, or pick a method that takes several "
                "(`tablereason methods` says which do: text_to_sql and program_of_thought "
                "among the built-in ones)"
            )
        table = source.table
        if table is None and tables is None:
            raise ConfigurationError(
                f"method {self.name} needs a table, but {source.dataset} example "
                f"{source.id!r} has none; pick a method for this dataset"
            )
        extra = {**self.example_options(source), **options}
        # a method that takes several tables reads a TableSet where it reads a table
        chosen = table if table is not None else tables
        return self.answer(chosen, source.question, **extra)  # type: ignore[arg-type]

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
    """A registered method: how to build it, loaded on first use.

    The catalog registers a method by ``"module:attr"`` so that nothing of it is imported
    until it is built or described; a class or function is taken as it is. What the
    method takes of the run's context is declared by the method itself, as class
    attributes read once it is loaded: ``takes_task`` (``"wikitq"``, ``"tabfact"``...),
    ``takes_data_dir`` (the run's data folder, for tools that read dataset files) and
    ``takes_several_tables`` (a :class:`~tablereason.table.named.TableSet`).

    Attributes:
        target: The factory, or where it is: ``"package.module:Name"``.

    Example:
        >>> spec = MethodSpec("tablereason.methods.baselines.text_to_sql:TextToSQL")
        >>> spec.factory.__name__, spec.takes_task, spec.takes_several_tables
        ('TextToSQL', False, True)
    """

    target: Callable[..., Method] | str

    @property
    def factory(self) -> Callable[..., Method]:
        """The factory, imported on first use.

        Raises:
            ConfigurationError: For a target that does not import or name a callable.
        """
        if not isinstance(self.target, str):
            return self.target
        return _load(self.target)

    @property
    def takes_task(self) -> bool:
        """Whether the method takes the run's ``task`` (its own declaration)."""
        return bool(getattr(self.factory, "takes_task", False))

    @property
    def takes_data_dir(self) -> bool:
        """Whether the method takes the run's ``data_dir`` (its own declaration)."""
        return bool(getattr(self.factory, "takes_data_dir", False))

    @property
    def takes_several_tables(self) -> bool:
        """Whether the method answers over several named tables (its own declaration)."""
        return bool(getattr(self.factory, "takes_several_tables", False))

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
        factory = self.factory
        kwargs = dict(options)
        if task is not None and self.takes_task:
            kwargs.setdefault("task", task)
        if data_dir is not None and self.takes_data_dir:
            kwargs.setdefault("data_dir", str(data_dir))
        try:
            return factory(llm, **kwargs)
        except TypeError as err:
            name = registered_as or getattr(factory, "name", getattr(factory, "__name__", "method"))
            raise ConfigurationError(
                f"method {name!r} does not accept these options {sorted(kwargs)}: {err}"
            ) from None


def _load(target: str) -> Callable[..., Method]:
    """The object ``"module:attr"`` names, imported now.

    Raises:
        ConfigurationError: When the module does not import or holds no such callable.
    """
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        factory = getattr(module, attr) if attr else None
    except (ImportError, AttributeError) as error:
        raise ConfigurationError(f"method {target!r} cannot be loaded: {error}") from None
    if not callable(factory):
        raise ConfigurationError(f"method {target!r} is not a class or function ('module:Name')")
    return factory  # type: ignore[no-any-return]
