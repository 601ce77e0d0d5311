r"""Mix-SC: k textual and k symbolic paths over one table, one vote, the textual wins a tie.

Mix self-consistency (Liu et al., "Rethinking Tabular Data Understanding with Large
Language Models", NAACL 2024) samples a textual reasoner and a symbolic one (code run
on the table) and takes the majority answer of both. Here the textual paths are a
registered method over the table (``text="chain_of_table"`` by default), and the
symbolic ones run in the sandbox: ``symbolic="program_of_thought"``, ``"text_to_sql"``,
or both (``"program_of_thought,text_to_sql"``: the k symbolic samples are shared out
in turn). Sample ``i`` of each kind is seeded ``seed + i``. Every answer is compared as
the task's metric compares answers (:mod:`~tablereason.methods.composed.vote`); of tied
answers, the one with more textual votes wins, then the one given first (the textual
samples come first).

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.table import Table
    >>> def reply(request):
    ...     text = request.as_text()
    ...     if "f_" in text:
    ...         return "<END>"
    ...     return "ans = 'Rome'\n```" if "```python" in text else "Oslo"
    >>> method = MixSC(ScriptedLLM(fn=reply), k=1, temperature=0.7)
    >>> prediction = method.run(Table.from_records(["city"], [["Oslo"], ["Rome"]]), "which?")
    >>> prediction.answer, [run.method for run in prediction.trace.runs]
    (['Oslo'], ['chain_of_table #1', 'program_of_thought #1'])
    >>> prediction.trace.steps[-1].name
    'tie: text preferred'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from tablereason.calls.sampling import Sampling
from tablereason.errors import ConfigurationError
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

TEXT = "text"
"""The ballot kind of a textual path (it wins ties)."""
SYMBOLIC = "code"
"""The ballot kind of a symbolic path."""


def _names(value: str | list[str], what: str) -> list[str]:
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [n.strip() for n in names if isinstance(n, str) and n.strip()]
    if not names:
        raise ConfigurationError(f"{what} names at least one method, got {value!r}")
    return names


class MixSC(ComposedMethod):
    """Mix self-consistency: textual and symbolic samples, one vote.

    Args:
        llm: The model every sample asks.
        task: ``"wikitq"``, ``"tabfact"``...: given to the inner methods, and how
            answers are compared.
        text: The textual method's registered name.
        symbolic: The symbolic method(s): a name, or names separated by commas, which
            share the k symbolic samples in turn.
        k: Samples of each kind (Mix-SC: 5 + 5).
        temperature: Every sample's temperature.
        top_p: Every sample's nucleus bound.
        seed: Sample ``i`` of each kind is run with ``seed + i``.
        workers: Samples run at once (threads; the model's concurrency limit applies).
        text_options: The textual method's own options.
        symbolic_options: The symbolic methods' own options (given to each).
        data_dir: The run's data folder, for inner methods that take one.
    """

    name: ClassVar[str] = "mix_sc"

    def __init__(
        self,
        llm: LLM,
        task: str = "wikitq",
        text: str = "chain_of_table",
        symbolic: str | list[str] = "program_of_thought",
        k: int = 5,
        temperature: float = 0.7,
        top_p: float = 1.0,
        seed: int = 0,
        workers: int = 4,
        text_options: dict[str, Any] | None = None,
        symbolic_options: dict[str, Any] | None = None,
        data_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.task = task
        self.text = text
        self.symbolic = _names(symbolic, "symbolic")
        self.k = sample_count(k, "k")
        self.sampling = Sampling.checked(temperature, top_p, seed)
        self.workers = sample_count(workers, "workers")
        self.options = {"text": dict(text_options or {}), "symbolic": dict(symbolic_options or {})}
        common: dict[str, Any] = {
            "task": task, "data_dir": data_dir, "temperature": temperature, "top_p": top_p,
        }  # fmt: skip
        self.samples: list[Sample] = []
        for i in range(self.k):
            method = build_inner(text, llm, options=text_options, seed=seed + i, **common)
            self.samples.append(Sample(f"{text} #{i + 1}", TEXT, method))
        for i in range(self.k):
            name = self.symbolic[i % len(self.symbolic)]
            method = build_inner(name, llm, options=symbolic_options, seed=seed + i, **common)
            self.samples.append(Sample(f"{name} #{i + 1}", SYMBOLIC, method))

    def config(self) -> dict[str, Any]:
        """The paths, their sampling, and each inner method's configuration."""
        inner = {s.label.split(" #")[0]: s.method.config() for s in self.samples}
        return {
            "method": self.name,
            "task": self.task,
            "settings": {"text": self.text, "symbolic": self.symbolic, "k": self.k,
                         "workers": self.workers, **vars(self.sampling), **self.options},
            "inner": inner,
        }  # fmt: skip

    def compose(self, example: Example) -> Prediction:
        """K textual and k symbolic samples on ``example``, and their vote."""
        trace = started(self.name, example)
        runs = run_samples(self.samples, example, workers=self.workers)
        ballots = [
            Ballot(None if run.error else run.answer, sample.kind)
            for sample, run in zip(self.samples, runs, strict=True)
        ]
        result = vote(ballots, task=self.task, prefer=TEXT)
        arguments = {"text": self.text, "symbolic": self.symbolic, "k": self.k,
                     "kinds": [s.kind for s in self.samples]}  # fmt: skip
        return voted(trace, runs, result, arguments)
