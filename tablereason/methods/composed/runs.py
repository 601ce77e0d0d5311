"""Running inner methods for a composed one: built by name, run concurrently, kept as sub-runs.

A composed method builds its inner methods through the catalog
(:func:`~tablereason.methods.catalog.build_method`), so it imports none of them, and
runs its samples with :func:`run_samples`: in a thread pool of at most ``workers``
threads (the model's own concurrency limit, when one is stacked, bounds the requests
as it does the harness's), each sample's result collected in sample order whatever the
order they finish in, each in a copy of the caller's context (so the harness's usage
scope counts its requests). A sample that raises becomes a failed sub-run; nothing of
the others is lost. Each sub-run is the sample's trace with its answer and error
(:attr:`~tablereason.trace.Trace.runs`).

Example:
    >>> from tablereason.trace import Prediction
    >>> class Fixed:
    ...     name = "fixed"
    ...     def __init__(self, answer): self.answer = answer
    ...     def run(self, example): return Prediction(answer=self.answer)
    ...     def config(self): return {"method": self.name}
    >>> from tablereason.datasets import Example
    >>> example = Example(dataset="demo", id="1", question="q", answer="")
    >>> runs = run_samples([Sample("a #1", "text", Fixed("3")), Sample("a #2", "code", Fixed("4"))],
    ...                    example, workers=2)
    >>> [(run.method, run.answer) for run in runs]
    [('a #1', '3'), ('a #2', '4')]
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from tablereason.errors import ConfigurationError
from tablereason.methods.catalog import build_method
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets.example import Example
    from tablereason.llm.base import LLM
    from tablereason.methods.base import Method
    from tablereason.methods.composed.vote import VoteResult
    from tablereason.table.value import Table

MAX_SAMPLES = 64
"""Most samples one composed run may ask for."""


@dataclass(frozen=True)
class Sample:
    """One inner run to make: its label in the trace, its kind of path, and the method."""

    label: str
    kind: str
    method: Method


def build_inner(
    name: str,
    llm: LLM,
    *,
    task: str | None,
    data_dir: str | os.PathLike[str] | None,
    options: dict[str, Any] | None,
    **sampling: Any,
) -> Method:
    """The inner method ``name``, with its own options and the sample's sampling.

    Raises:
        ConfigurationError: For an unknown or unfit inner method or its options.
    """
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"an inner method is named by a string, got {name!r}")
    if options is not None and not isinstance(options, dict):
        raise ConfigurationError(f"inner options are a mapping of option to value, got {options!r}")
    merged = {**(options or {}), **sampling}
    return build_method(name, llm, task=task, data_dir=data_dir, **merged)


def sample_count(value: Any, what: str) -> int:
    """A number of samples, checked: a whole number from 1 to :data:`MAX_SAMPLES`.

    Raises:
        ConfigurationError: Otherwise.

    Example:
        >>> sample_count(5, "k")
        5
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAMPLES:
        raise ConfigurationError(
            f"{what} must be a whole number from 1 to {MAX_SAMPLES}, got {value!r}"
        )
    return value


class ComposedMethod(ABC):
    """A method made of inner runs: ``run(example)``, or ``run(table, question)``.

    Subclasses write :meth:`compose` (one example) and ``config``; what they take of the
    run's context they declare as every method does.
    """

    name: ClassVar[str]
    takes_task: ClassVar[bool] = True
    takes_data_dir: ClassVar[bool] = True

    def run(self, source: Example | Table, question: str | None = None) -> Prediction:
        """Answer an example, or ``question`` over the table ``source`` (held, not copied).

        Raises:
            ConfigurationError: For a table without a question, or an inner method that
                refuses the example (no table, several tables for a one-table method).
        """
        from tablereason.datasets.example import Example

        if not isinstance(source, Example):
            if question is None:
                raise ConfigurationError(f"{self.name}.run(table, question) needs the question")
            source = Example.from_table(source, question, dataset="ask")
        return self.compose(source)

    @abstractmethod
    def compose(self, example: Example) -> Prediction:
        """Answer one example from its inner runs."""

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The run configuration, the inner methods' included."""


def _one(sample: Sample, example: Example) -> Trace:
    try:
        prediction = sample.method.run(example)
    except ConfigurationError:  # the example does not suit the method: the caller's to fix
        raise
    except Exception as error:  # a sample that raises is a failed sample, not a lost run
        prediction = Prediction(error=f"{type(error).__name__}: {error}")
    trace = prediction.trace.model_copy()
    trace.method, trace.answer, trace.error = sample.label, prediction.answer, prediction.error
    trace.question = trace.question or example.question
    return trace


def run_samples(samples: Sequence[Sample], example: Example, *, workers: int) -> list[Trace]:
    """Run every sample on ``example``; their sub-runs, in sample order.

    ``workers`` threads at most run at once (1: one after another, in this thread).
    """
    if workers <= 1 or len(samples) <= 1:
        return [_one(sample, example) for sample in samples]
    with ThreadPoolExecutor(max_workers=min(workers, len(samples))) as pool:
        # Each sample runs in a copy of this context: the harness's usage scope and a
        # followed run's feed are context variables, which threads do not inherit.
        futures = [pool.submit(copy_context().run, _one, s, example) for s in samples]
        return [future.result() for future in futures]


def input_step(example: Example) -> TraceStep:
    """The composed trace's first step: the example's table, as every method records it."""
    table = example.table if example.has_table else None
    return TraceStep(kind="input", name="table", table=table)


def winner_table(runs: Sequence[Trace], result: VoteResult) -> Any:
    """The last table of the first sample that gave the winning answer (for its evidence)."""
    for candidate in result.candidates:
        if candidate.answer is result.winner and candidate.voters:
            tables = runs[candidate.voters[0]].tables
            return tables[-1] if tables else None
    return None


def started(name: str, example: Example) -> Trace:
    """The composed run's trace, made before any sample (so a followed run reports it)."""
    trace = Trace(method=name, question=example.question)
    trace.add(input_step(example))
    return trace


def voted(
    trace: Trace, runs: list[Trace], result: VoteResult, arguments: dict[str, Any]
) -> Prediction:
    """The composed prediction: ``trace`` with the sub-runs and the vote step."""
    trace.runs = runs
    step = TraceStep(
        kind="vote", name=result.rule, arguments={**arguments, **result.to_dict()},
        table=winner_table(runs, result),
        note=f"{len(runs)} samples, {len(result.abstained)} without an answer",
    )  # fmt: skip
    trace.add(step)
    if result.winner is None:
        errors = [run.error for run in runs if run.error]
        reason = f"no sample gave an answer ({len(runs)} asked)"
        first = f"; the first error: {errors[0]}" if errors else ""
        return Prediction(trace=trace, error=reason + first)
    return Prediction(answer=result.winner, trace=trace)
