"""Self-consistency: k runs of one inner method at a temperature, then a vote.

The inner method is named (``inner="chain_of_table"``) and built through the catalog k
times, sample ``i`` (from 0) with ``seed + i``: its every request is sampled at
``temperature`` with its own seed, so the k samples of a prompt are k different
requests, each recorded once and replayed identically (the response cache keys a
seeded request by its seed). The answers are voted on as the task's metric compares
them (:mod:`~tablereason.methods.composed.vote`); a tie goes to the answer given first
in sample order.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.table import Table
    >>> replies = {0: "Oslo", 1: "Rome", 2: "oslo."}
    >>> llm = ScriptedLLM(fn=lambda r: "<END>" if "f_" in r.as_text() else replies[r.seed])
    >>> method = SelfConsistency(llm, inner="chain_of_table", k=3, temperature=0.7)
    >>> prediction = method.run(Table.from_records(["city"], [["Oslo"], ["Rome"]]), "which?")
    >>> prediction.answer, [run.answer for run in prediction.trace.runs]
    (['Oslo'], [['Oslo'], ['Rome'], ['oslo.']])
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from tablereason.calls.sampling import Sampling
from tablereason.methods.composed.runs import (
    ComposedMethod,
    Sample,
    build_inner,
    run_samples,
    sample_count,
    started,
    voted,
)
from tablereason.methods.composed.vote import Ballot, vote

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets.example import Example
    from tablereason.llm.base import LLM
    from tablereason.trace.record import Prediction


class SelfConsistency(ComposedMethod):
    """k samples of an inner method, voted on (Wang et al., 2023, over any method here).

    Args:
        llm: The model every sample asks.
        task: ``"wikitq"``, ``"tabfact"``...: given to the inner method, and how answers
            are compared in the vote.
        inner: The inner method's registered name.
        k: Samples.
        temperature: Every sample's temperature.
        top_p: Every sample's nucleus bound.
        seed: Sample ``i`` is run with ``seed + i``.
        workers: Samples run at once (threads; the model's concurrency limit applies).
        inner_options: The inner method's own options (``{"profile": "paper"}``).
        data_dir: The run's data folder, for inner methods that take one.
    """

    name: ClassVar[str] = "self_consistency"

    def __init__(
        self,
        llm: LLM,
        task: str = "wikitq",
        inner: str = "chain_of_table",
        k: int = 5,
        temperature: float = 0.7,
        top_p: float = 1.0,
        seed: int = 0,
        workers: int = 4,
        inner_options: dict[str, Any] | None = None,
        data_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.task = task
        self.inner = inner
        self.k = sample_count(k, "k")
        self.sampling = Sampling.checked(temperature, top_p, seed)
        self.workers = sample_count(workers, "workers")
        self.inner_options = dict(inner_options or {})
        self.methods = [
            build_inner(
                inner, llm, task=task, data_dir=data_dir, options=inner_options,
                temperature=temperature, top_p=top_p, seed=seed + i,
            )
            for i in range(self.k)
        ]  # fmt: skip

    def config(self) -> dict[str, Any]:
        """The samples, their sampling, and the inner method's configuration."""
        return {
            "method": self.name,
            "task": self.task,
            "settings": {"inner": self.inner, "k": self.k, "workers": self.workers,
                         **vars(self.sampling), "inner_options": self.inner_options},
            "inner": self.methods[0].config(),
        }  # fmt: skip

    def compose(self, example: Example) -> Prediction:
        """K samples of the inner method on ``example``, and their vote."""
        trace = started(self.name, example)
        samples = [
            Sample(f"{self.inner} #{i + 1}", "sample", m) for i, m in enumerate(self.methods)
        ]
        runs = run_samples(samples, example, workers=self.workers)
        result = vote(
            [Ballot(run.answer if not run.error else None) for run in runs], task=self.task
        )
        return voted(trace, runs, result, {"inner": self.inner, "k": self.k})
