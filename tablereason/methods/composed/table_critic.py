"""Table critic: a judge checks a chain, a critic names its first wrong step, a refiner re-runs.

The scheme of Table-Critic (Yu et al., 2025) with our own prompts and our engine: the
inner method (Chain-of-Table by default) answers; then, for at most ``rounds`` rounds,

1. the **judge** reads the table, the question, the chain's steps (each operation with
   the table after it) and the answer, and says whether the answer holds (``yes`` ends
   the rounds: a chain the judge accepts is never changed);
2. the **critic** names the first wrong step (the last number is the answer step);
3. the **refiner** runs the inner method again from the table before that step (the
   input table for step 1), sampled at ``refine_temperature`` with seed ``seed + round``,
   and the chain becomes the steps before the wrong one followed by the new run's.

The answer is the last chain's. A verdict or a step number that cannot be read ends the
rounds where they are (documented fallback: the chain as it stands). The trace keeps the
first chain and every refinement as sub-runs, each verdict and critique as steps.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.table import Table
    >>> def reply(request):
    ...     text = request.as_text()
    ...     if text.endswith("Verdict:"):
    ...         return " yes" if "Answer: 2" in text else " no"
    ...     if text.endswith("First wrong step:"):
    ...         return " 1"
    ...     if "f_" in text:
    ...         return "<END>"
    ...     return " 2" if request.temperature > 0 else " 1"
    >>> critic = TableCritic(ScriptedLLM(fn=reply), task="wikitq")
    >>> prediction = critic.run(Table.from_records(["n"], [["1"], ["2"]]), "the largest n?")
    >>> prediction.answer, [run.answer for run in prediction.trace.runs]
    (['2'], [['1'], ['2']])
    >>> judge, critique = prediction.trace.steps[1:3]
    >>> judge.arguments["verdict"], critique.arguments["step"]
    ('no', 1)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from tablereason.calls import Door, ReplySpec
from tablereason.calls.sampling import Sampling
from tablereason.errors import ConfigurationError, ParseError
from tablereason.llm.constraints import OneOf
from tablereason.llm.errors import LLMError
from tablereason.methods.composed.runs import (
    ComposedMethod,
    Sample,
    build_inner,
    run_samples,
    started,
)
from tablereason.prompts.render import render
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets.example import Example
    from tablereason.llm.base import LLM

MAX_ROUNDS = 8
"""Most judge-critic-refiner rounds one question may take."""


@dataclass
class Chain:
    """A chain as the judge sees it: its operations (with the table after each) and answer."""

    start: Any
    operations: list[tuple[str, Any]] = field(default_factory=list)
    answer: str | list[str] | None = None
    run: int = 0

    def table_before(self, step: int) -> Any:
        """The table step ``step`` (from 1) started from."""
        return (
            self.start if step <= 1 else self.operations[min(step, len(self.operations) + 1) - 2][1]
        )


def _operations(trace: Trace) -> list[tuple[str, Any]]:
    """The operations of a run, each as ``name(arguments)`` and the table after it."""
    found = []
    for step in trace.steps:
        if step.kind == "operation" and step.table is not None and not step.error:
            arguments = json.dumps(step.arguments, ensure_ascii=False, default=str)
            found.append((f"{step.name}({arguments})", step.table))
    return found


def _answer_text(answer: str | list[str] | None) -> str:
    if answer is None:
        return "(none)"
    return " | ".join(answer) if isinstance(answer, list) else answer


def verdict(text: str) -> bool:
    """Read a judge's reply: ``yes`` (the answer holds) or ``no``.

    Raises:
        ParseError: For a reply that is neither.

    Example:
        >>> verdict(" Yes."), verdict("no, row 2 is wrong")
        (True, False)
    """
    words = text.strip().lower().replace(",", " ").replace(".", " ").split()
    if words and words[0] in ("yes", "true", "right", "correct"):
        return True
    if words and words[0] in ("no", "false", "wrong", "incorrect"):
        return False
    raise ParseError("the verdict is neither yes nor no", raw=text, expected="yes or no")


def step_number(text: str, last: int) -> int:
    """Read a critic's reply: a step number from 1 to ``last``.

    Raises:
        ParseError: For a reply without one.

    Example:
        >>> step_number(" Step 2", 3), step_number("3.", 3)
        (2, 3)
    """
    for word in text.replace(".", " ").replace(":", " ").split():
        if word.isdigit() and 1 <= int(word) <= last:
            return int(word)
    raise ParseError("no step number", raw=text, expected=f"a number from 1 to {last}")


def judged_count(trace: Trace) -> int:
    """How many verdicts the judge gave in a critic run."""
    return sum(1 for step in trace.steps if step.kind == "judge")


class TableCritic(ComposedMethod):
    """A judge, a critic and a refiner over a finished chain (Table-Critic's scheme).

    Args:
        llm: The model of the chain, the judge, the critic and the refiner.
        task: ``"wikitq"`` or ``"tabfact"``: given to the inner method.
        inner: The inner method's registered name.
        rounds: Most judge-critic-refiner rounds.
        refine_temperature: The refiner's sampling temperature.
        seed: Refinement ``r`` (from 1) is sampled with ``seed + r``.
        view_rows: Rows of each table the judge and the critic are shown.
        inner_options: The inner method's own options.
        data_dir: The run's data folder, for inner methods that take one.
    """

    name: ClassVar[str] = "table_critic"

    def __init__(
        self,
        llm: LLM,
        task: str = "wikitq",
        inner: str = "chain_of_table",
        rounds: int = 2,
        refine_temperature: float = 0.7,
        seed: int = 0,
        view_rows: int = 20,
        inner_options: dict[str, Any] | None = None,
        data_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_ROUNDS:
            raise ConfigurationError(
                f"rounds must be a whole number from 1 to {MAX_ROUNDS}, got {rounds!r}"
            )
        self.task, self.inner, self.rounds, self.view_rows = task, inner, rounds, view_rows
        self.sampling = Sampling.checked(refine_temperature, 1.0, seed)
        self.inner_options = dict(inner_options or {})
        context: dict[str, Any] = {"task": task, "data_dir": data_dir, "options": inner_options}
        self.first = build_inner(inner, llm, **context)
        self.refiners = [
            build_inner(inner, llm, temperature=refine_temperature, seed=seed + r, **context)
            for r in range(1, rounds + 1)
        ]
        self.door = Door(llm, site="table_critic")

    def config(self) -> dict[str, Any]:
        """The rounds, the refiner's sampling and the inner method's configuration."""
        return {
            "method": self.name,
            "task": self.task,
            "settings": {
                "inner": self.inner, "rounds": self.rounds, "view_rows": self.view_rows,
                "refine_temperature": self.sampling.temperature, "seed": self.sampling.seed,
                "inner_options": self.inner_options,
            },
            "inner": self.first.config(),
        }  # fmt: skip

    def _shown(self, example: Example, chain: Chain, *, with_answer: bool) -> dict[str, str]:
        lines = []
        for number, (text, table) in enumerate(chain.operations, start=1):
            lines.append(
                f"{number}. {text}\n   table after it:\n{table.to_pipe(max_rows=self.view_rows)}"
            )
        last = len(chain.operations) + 1
        lines.append(f"{last}. read the answer from the last table: {_answer_text(chain.answer)}")
        shown = {
            "table": chain.start.to_pipe(max_rows=self.view_rows),
            "label": "Statement" if self.task == "tabfact" else "Question",
            "question": example.question,
            "steps": "\n".join(lines),
        }
        if with_answer:
            shown["answer"] = _answer_text(chain.answer)
        return shown

    def _ask(self, trace: Trace, step: TraceStep, prompt: str, spec: ReplySpec[Any]) -> Any:
        trace.add(step.start())
        try:
            return self.door.ask(step, prompt, spec).value
        except LLMError as error:  # the model failed: the chain stands as it is
            step.error = f"the model failed: {error}"
            return None
        finally:
            step.stop()

    def compose(self, example: Example) -> Prediction:
        """The first chain, then judge, critic and refiner rounds, on ``example``."""
        trace = started(self.name, example)
        start = example.table
        if start is None:
            raise ConfigurationError(f"{self.name} answers over one table; this example has none")
        runs = run_samples([Sample(f"{self.inner}", "chain", self.first)], example, workers=1)
        chain = Chain(start=start, operations=_operations(runs[0]), answer=runs[0].answer)
        for round_ in range(1, self.rounds + 1):
            if runs[chain.run].error:
                break
            judged = TraceStep(kind="judge", name=f"round {round_}", prompt_name="composed/judge")
            prompt = render("composed/judge", **self._shown(example, chain, with_answer=True))
            spec = ReplySpec(parse=verdict, constraint=OneOf(options=(" yes", " no")), max_tokens=3)
            holds = self._ask(trace, judged, prompt, spec)
            judged.arguments = {"round": round_, "verdict": {True: "yes", False: "no"}.get(holds)}
            if holds is not False:
                break
            last = len(chain.operations) + 1
            critique = TraceStep(
                kind="critic", name=f"round {round_}", prompt_name="composed/critic"
            )
            prompt = render("composed/critic", **self._shown(example, chain, with_answer=False))
            wrong = self._ask(
                trace,
                critique,
                prompt,
                ReplySpec(parse=partial(step_number, last=last), max_tokens=4),
            )
            critique.arguments = {"round": round_, "step": wrong, "of": last}
            if wrong is None:
                break
            restart = chain.table_before(wrong)
            again = example.model_copy()
            again._table = restart
            label = f"{self.inner} refined from step {wrong} (round {round_})"
            refined = run_samples(
                [Sample(label, "refine", self.refiners[round_ - 1])], again, workers=1
            )[0]
            runs.append(refined)
            chain = Chain(
                start=start, operations=chain.operations[: wrong - 1] + _operations(refined),
                answer=refined.answer, run=len(runs) - 1,
            )  # fmt: skip
        trace.runs = runs
        final = runs[chain.run]
        tables = final.tables
        trace.add(TraceStep(
            kind="answer", name="chosen", table=tables[-1] if tables else None,
            arguments={"run": chain.run + 1, "judged": judged_count(trace)},
        ))  # fmt: skip
        if final.error:
            return Prediction(trace=trace, error=final.error)
        return Prediction(answer=final.answer or "", trace=trace)
