"""Program-of-Thought: a Python program that sets ``ans``, verified and run in the sandbox."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from tablereason.calls import Door, ReplySpec, Sampling
from tablereason.errors import ConfigurationError, LLMError
from tablereason.llm.base import LLM
from tablereason.methods.base import TableMethod
from tablereason.methods.baselines.code_text import (
    PROGRAM_STOP,
    answer_text,
    code_column_names,
    one_line,
    question_text,
    verdict_text,
)
from tablereason.methods.code_extraction import extract_python
from tablereason.methods.constraints.tools import program_block
from tablereason.prompts.render import render, template_hash, template_names
from tablereason.sandbox.verify import RetrySettings, generate_and_verify
from tablereason.table.named import TableSet
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.sandbox.python import PythonSandbox
    from tablereason.table.value import Table


TASKS = ("tabfact", "tabmwp", "wikitq", None)
"""The tasks a program is written for (None: any table and question, as WikiTQ's)."""


class ProgramOfThought(TableMethod):
    """Program-of-Thought over a table (TabMWP, WikiTQ, TabFact verdicts), run in the sandbox.

    A :class:`~tablereason.methods.base.TableMethod`: ``run(example)``, or
    ``run(table, question, unit=..., choices=..., title=...)``.

    Args:
        llm: Any backend of the LLM protocol.
        settings: Retry and verification settings (``RetrySettings.paper()`` for the
            Chameleon program generator and verifier behaviour).
        sandbox: Sandbox pool; the shared default when None.
        max_tokens: Completion budget per program.
        max_rows: Rows of the table shown in the prompt (the program sees all rows).
        constrain: Send each program's constraint (one code block with a line that
            sets ``ans``) to models that enforce it.
        temperature: Sampling temperature of every request (``None``: each call's own).
        top_p: Nucleus sampling bound of every request.
        seed: Seed sent with sampled requests, so a sampled run replays exactly.
        task: ``"tabfact"``: the question is a statement to check, the program sets
            ``ans`` to True or False, and the answer is ``yes`` or ``no`` (any other value
            is kept as it is, which the metric scores wrong); any other task (or None):
            an open question.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> ProgramOfThought(ScriptedLLM(replies=[])).settings.patience
        3
    """

    name: ClassVar[str] = "program_of_thought"
    takes_task: ClassVar[bool] = True
    takes_several_tables: ClassVar[bool] = True

    def __init__(
        self,
        llm: LLM,
        settings: RetrySettings | None = None,
        sandbox: PythonSandbox | None = None,
        max_tokens: int = 256,
        max_rows: int | None = 60,
        constrain: bool = True,
        temperature: float | None = None,
        top_p: float = 1.0,
        seed: int | None = None,
        task: str | None = None,
    ) -> None:
        if task not in TASKS:
            raise ConfigurationError(
                f"program_of_thought answers over tables: task {task!r} is not one of "
                f"{', '.join(t for t in TASKS if t)}"
            )
        self.llm = llm
        self.task = task
        self.sampling = Sampling.checked(temperature, top_p, seed)
        self.door = Door(llm, site="baselines", constrain=constrain, sampling=self.sampling)
        self.settings = settings or RetrySettings()
        self.sandbox = sandbox
        self.max_tokens = max_tokens
        self.max_rows = max_rows

    def config(self) -> dict[str, Any]:
        """Settings and a hash of every prompt template, for run configurations."""
        return {
            "method": self.name,
            "task": self.task,
            "settings": {
                "patience": self.settings.patience,
                "feedback": self.settings.feedback,
                "extract": self.settings.strip_fences,
                "max_tokens": self.max_tokens,
                "max_rows": self.max_rows,
                **vars(self.sampling),
            },
            "prompts": {n: template_hash(n) for n in template_names("baselines")},
        }

    def prompt(
        self,
        table: Table,
        question: str,
        *,
        title: str | None = None,
        unit: str | None = None,
        choices: list[str] | None = None,
        feedback: str | None = None,
    ) -> str:
        """The program-generation prompt; it ends inside an opened ```` ```python ```` fence.

        Below the table, a ``Columns of df:`` line lists the DataFrame's column names as
        Python strings (see :func:`code_column_names`).

        Args:
            table: The table (shown as text, at most ``max_rows`` rows).
            question: The question.
            title: A title for the table (TabMWP).
            unit: The answer's unit, shown after the question.
            choices: Options to pick the answer from.
            feedback: Why the last program failed (a retry), stated above the fence.
        """
        if choices:
            kind = "one of the options given in the question"
        elif unit:
            kind = "a number"
        else:
            kind = "a number or text from the table"
        repair = (
            render("baselines/program_of_thought_repair", error=one_line(feedback)) + "\n"
            if feedback
            else ""
        )
        if isinstance(table, TableSet):  # one DataFrame per table, named as the table
            return render(
                "baselines/program_of_thought_tables", kind=kind,
                tables=table.describe(self.max_rows),
                question=question_text(question, unit, choices), repair=repair,
            )  # fmt: skip
        # a TabFact statement is checked: the program sets ans to True or False
        verdict = self.task == "tabfact"
        return render(
            "baselines/program_of_thought_tabfact" if verdict else "baselines/program_of_thought",
            **({} if verdict else {"kind": kind}),
            regarding=f" ({title})" if title else "",
            table=table.to_pipe(max_rows=self.max_rows),
            columns=", ".join(
                json.dumps(n, ensure_ascii=False) for n in code_column_names(table.columns)
            ),
            question=question if verdict else question_text(question, unit, choices),
            repair=repair,
        )

    def answer(
        self,
        table: Table,
        question: str,
        *,
        title: str | None = None,
        unit: str | None = None,
        choices: list[str] | None = None,
        **options: Any,
    ) -> Prediction:
        """Generate, verify and run programs until one yields an answer.

        Args:
            table: The table (the program gets all of it as ``df``).
            question: The question.
            title: A title for the table (TabMWP).
            unit: The answer's unit, shown after the question.
            choices: Options to pick the answer from.
            **options: None other is known; any raises :class:`ConfigurationError`.

        Raises:
            ConfigurationError: For an unknown option.
        """
        if options:
            raise ConfigurationError(
                f"{self.name} takes no options {sorted(options)}; it knows title, unit, choices"
            )
        trace = Trace(method=self.name, question=question)
        trace.add(TraceStep(kind="input", name="table", table=table))
        constraint = program_block() if self.door.enforces("grammar") else None

        def generate(temperature: float, feedback: str | None) -> str:
            text = self.prompt(
                table, question, title=title, unit=unit, choices=choices, feedback=feedback
            )
            step = trace.add(TraceStep(
                kind="program", name="program_generator", prompt_name="program_of_thought",
                arguments={"temperature": self.door.sent_temperature(temperature)},
            ))  # fmt: skip
            spec: ReplySpec[str] = ReplySpec(
                constraint=constraint,
                reasks=1 if constraint is not None else 0,
                max_tokens=self.max_tokens,
                stop=PROGRAM_STOP,
                temperature=temperature,
            )
            step.start()
            try:
                reply = self.door.ask(step, text, spec, site="baselines/program_of_thought").text
            finally:
                step.stop()
            if not self.settings.strip_fences:  # the reference runs the reply as it is
                return reply
            return extract_python(reply, answer=self.settings.answer)

        frames: dict[str, Any] = {}
        for name, one in table.items() if isinstance(table, TableSet) else [("df", table)]:
            frames[name] = one.to_pandas()
            frames[name].columns = code_column_names(one.columns)
        try:
            outcome = generate_and_verify(generate, self.settings, frames, self.sandbox)
        except LLMError as exc:
            return Prediction(answer="", trace=trace, error=str(exc))
        program_steps = [s for s in trace.steps if s.kind == "program"]
        for step, attempt in zip(program_steps, outcome.attempts, strict=False):
            step.arguments["program"] = attempt.program
            step.error = attempt.reason
            if attempt.result is not None:
                step.arguments["value"] = attempt.result.value
                step.note = attempt.result.stdout or None
        answer = (
            verdict_text(outcome.value) if self.task == "tabfact" else answer_text(outcome.value)
        )
        trace.add(TraceStep(
            kind="answer", name="program_executor",
            arguments={"program": outcome.program, "verified": outcome.verified,
                       "value": outcome.value},
            error=None if outcome.verified else "no program verified; kept the last one",
        ))  # fmt: skip
        error = None if outcome.verified else outcome.attempts[-1].reason
        return Prediction(answer=answer, trace=trace, error=error)
