r"""ReWOO (Xu et al., 2023): plan every tool call up front, run the workers, then solve.

The planner writes ``Plan:`` / ``#E<n> = Tool[input]`` steps in one call; workers
run the tools (independent steps concurrently, each step once the evidence it
references is ready); the solver reads the plans and evidence and answers briefly.
A failed tool yields a "No evidence found" observation and its dependants still
run. Every model call is counted, those made inside tools included.

Two profiles (:data:`PROFILES`): ``"default"`` (a lean planner prompt with two
short demos, at most 4 steps and a stop at the blank line after the plan; lenient
parser with JSON fallback; concurrent workers; plain evidence substitution; evidence
focused on what reads it, within a length bound; a one-line solver answer;
temperature 0) and ``"paper"`` (the reference: four longer demos and the reference's
parser and worker quirks: column-0 lines only, ``#E10+`` dropped, last input
character dropped, evidence wrapped in brackets and passed whole, plans paired with
evidence by index, temperature 0.5, up to 3 attempts per question). docs/tools.md
lists the differences. Over the user's tables (task ``"wikitq"`` or ``"tabfact"``)
the planner sees each table's bounded view and plans SQL and Python calls (the SQL
worker and the sandbox). The attempt loop, tool reset and failure are
:class:`~tablereason.methods.tool_loop.ToolMethod`'s, shared with ReAct.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.tools import Calculator
    >>> llm = ScriptedLLM(replies=[" add them\n#E1 = Calculator[2 + 3]", "5"])
    >>> ReWOO(llm, tools=[Calculator()]).run("What is 2 + 3?").answer
    '5'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from tablereason.calls import ReplySpec
from tablereason.calls.sampling import SamplingSettings
from tablereason.errors import ConfigurationError, ParseError
from tablereason.llm.base import LLM
from tablereason.methods.constraints.tools import rewoo_plan
from tablereason.methods.rewoo.evidence import worker_log
from tablereason.methods.rewoo.parse import (
    ParsedPlan,
    bounded,
    parse_worker_plan,
    parse_worker_plan_paper,
)
from tablereason.methods.rewoo.workers import Workers
from tablereason.methods.tool_loop import RunFailed, ToolMethod
from tablereason.methods.tool_tasks import (
    TABLE_TASKS,
    VIEW_ROWS,
    Subject,
    check_task,
    final_answer,
    question_text,
)
from tablereason.prompts.render import render
from tablereason.registry import Registry
from tablereason.tools.base import Tool, describe, is_no_evidence
from tablereason.trace.record import Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets import Example
    from tablereason.llm.constraints import Constraint


class ReWOOSettings(SamplingSettings):
    """Everything that differs between profiles.

    Attributes:
        profile: ``"default"`` or ``"paper"``.
        temperature: Planner and solver temperature (paper: 0.5).
        top_p: Nucleus sampling bound of every request.
        seed: Seed sent with sampled requests, so a sampled run replays exactly.
        planner_max_tokens: Planner completion budget.
        solver_max_tokens: Solver completion budget.
        concurrent: Run independent steps in parallel threads.
        max_workers: Threads for concurrent steps.
        wrap_evidence: Substitute ``#E1`` as ``[evidence]`` (the reference) instead of
            the plain evidence.
        demo_set: The demo templates, ``rewoo/<demo_set>_<task>`` (default: two short
            HotpotQA demos; paper: four longer ones).
        max_evidence_chars: Each step's evidence shown to the solver is focused on the
            question to at most this many characters (None: shown whole).
        max_reference_chars: Evidence substituted for ``#E<n>`` in a later tool input
            is focused on that input to at most this many characters (None: whole).
        max_steps: Evidence steps run per plan; the planner stops before step
            ``max_steps + 1`` and later steps are dropped with a warning (None: no bound).
        attempts: Whole-run attempts when the run crashes (the paper's evaluator
            retries up to 3 times).
        stop: Planner stop strings (the default stops at the blank line that ends a
            plan in the demos, or before a new question).
        solver_stop: Solver stop strings (the default answer is one line).
        constrain: Send the plan's constraint (``Plan:`` lines and ``#E<n> =
            Tool[input]`` lines naming the method's tools, numbered in order, within
            ``max_steps``) to models that enforce it. The paper profile asks as the
            reference does: off unless set.
        view_rows: Lines of each table's view (columns and rows) in a table task's
            planner prompt, whatever the table's size.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Literal["default", "paper"] = "default"
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    planner_max_tokens: int = Field(default=128, ge=1)
    solver_max_tokens: int = Field(default=32, ge=1)
    concurrent: bool = True
    max_workers: int = Field(default=4, ge=1)
    wrap_evidence: bool = False
    demo_set: str = Field(default="demos", pattern=r"^\w+$")
    max_evidence_chars: int | None = Field(default=300, ge=40)
    max_reference_chars: int | None = Field(default=400, ge=40)
    max_steps: int | None = Field(default=4, ge=1)
    attempts: int = Field(default=1, ge=1)
    stop: tuple[str, ...] = ("\nQuestion:", "\n\n")
    solver_stop: tuple[str, ...] = ("\n",)
    constrain: bool = True
    view_rows: int = Field(default=VIEW_ROWS, ge=4)


PROFILES: Registry[ReWOOSettings] = Registry("ReWOO profile")
PROFILES.register("default", ReWOOSettings())
PROFILES.register(
    "paper",
    ReWOOSettings(
        profile="paper",
        temperature=0.5,
        planner_max_tokens=256,
        solver_max_tokens=256,
        concurrent=False,
        wrap_evidence=True,
        demo_set="paper_demos",
        max_evidence_chars=None,
        max_reference_chars=None,
        max_steps=None,
        attempts=3,
        stop=(),
        solver_stop=(),
        constrain=False,
    ),
)


_ECHO = re.compile(r"^\s*(?:plan\s*\d*\s*:|#\s*E\d+|evidence\s*:|question\s*:)", re.I)


_SHORT_EVIDENCE = 20


def _one_line(task_text: str) -> str:
    """The task on one line, without its ``Question:`` label."""
    return " ".join(task_text.removeprefix("Question:").split())


class ReWOO(ToolMethod):
    """Planner, workers and solver over pluggable tools, or over the user's tables.

    Args:
        llm: Any backend of the LLM protocol (planner and solver; tools carry their own).
        tools: The tools; defaults to :func:`~tablereason.methods.tool_tasks.default_tools`
            for the task (which needs the data folder for HotpotQA), and for a table task
            SQL and Python over the question's tables.
        task: ``"hotpotqa"``, ``"scienceqa"``, or a table task: ``"wikitq"``
            (``run(table, question)``) or ``"tabfact"`` (a statement).
        profile: ``"default"`` or ``"paper"``.
        demos: Planner demos; the task's demo file when None.
        data_dir: Data folder the default tools read (HotpotQA paragraphs, ScienceQA
            captions and OCR); ``$TABLEREASON_DATA_DIR`` when None. Unused with ``tools``.
        **overrides: Individual :class:`ReWOOSettings` fields to change.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> from tablereason.tools import Calculator
        >>> ReWOO(ScriptedLLM(replies=[]), tools=[Calculator()], profile="paper").settings.attempts
        3
    """

    name: ClassVar[str] = "rewoo"
    prompt_folder: ClassVar[str] = "rewoo"
    takes_task: ClassVar[bool] = True
    takes_data_dir: ClassVar[bool] = True

    def __init__(
        self,
        llm: LLM,
        tools: Sequence[Tool] | None = None,
        *,
        task: str = "hotpotqa",
        profile: str = "default",
        demos: str | None = None,
        data_dir: str | None = None,
        **overrides: Any,
    ) -> None:
        base = PROFILES.get(profile)
        try:
            settings = ReWOOSettings.model_validate({**base.model_dump(), **overrides})
        except ValueError as err:
            raise ConfigurationError(f"invalid ReWOO settings: {err}") from None
        self.settings: ReWOOSettings = settings
        super().__init__(llm, tools, task=task, data_dir=data_dir, settings=settings)
        if not self.tools and not self.table_task:
            raise ConfigurationError("ReWOO needs at least one tool")
        # The table demos are the same in both profiles: the reference has none.
        demo_name = (
            "rewoo/demos_table"
            if check_task(task) in TABLE_TASKS
            else f"rewoo/{self.settings.demo_set}_{self.task}"
        )
        self.demos = demos if demos is not None else render(demo_name)
        self.workers = self.workers_for(self.tools)

    def workers_for(self, tools: list[Tool]) -> Workers:
        """The workers that run a plan's steps with ``tools``."""
        return Workers(
            tools,
            paper=self.settings.profile == "paper",
            concurrent=self.settings.concurrent,
            max_workers=self.settings.max_workers,
            wrap_evidence=self.settings.wrap_evidence,
            reference_chars=self.settings.max_reference_chars,
        )

    # ------------------------------------------------------------------ prompts

    @property
    def _paper(self) -> bool:
        return self.settings.profile == "paper"

    def task_text(self, example: Example | str | Subject) -> str:
        """The question as planner and solver see it (paper: the raw question)."""
        subject = example if isinstance(example, Subject) else Subject(example)
        if self._paper and self.task == "hotpotqa":
            return subject.question
        return question_text(subject, self.task, view_rows=self.settings.view_rows)

    def planner_prompt(self, task_text: str, tools: Sequence[Tool] | None = None) -> str:
        """The planner prompt for ``task_text`` (with the method's tools when None)."""
        shown = describe(list(self.tools if tools is None else tools))
        if self._paper:
            return render(
                "rewoo/paper_planner", tools=shown, demos=self.demos, question=task_text,
            ) + "\n"  # fmt: skip
        return render("rewoo/planner", tools=shown, demos=self.demos, question=task_text)

    def solver_prompt(self, task_text: str, worker_log: str) -> str:
        """The solver prompt."""
        if self._paper:
            return render("rewoo/paper_solver", question=task_text, worker_log=worker_log) + "\n"
        return render("rewoo/solver", question=_one_line(task_text), worker_log=worker_log)

    # ------------------------------------------------------------------ run

    def _ask(self, step: TraceStep, prompt: str, spec: ReplySpec[str], site: str) -> str:
        """One call through the door, timed on ``step``; the reply's text."""
        step.start()
        try:
            return self.door.ask(step, prompt, spec, site=site).text
        finally:
            step.stop()

    def _plan_constraint(self, tools: Sequence[Tool]) -> Constraint | None:
        """The plan's grammar (built only when it would be sent)."""
        if not self.door.enforces("grammar"):
            return None
        steps = self.settings.max_steps or 9  # the reference reads #E1 to #E9
        return rewoo_plan([t.name for t in tools], steps=steps)

    def attempt(self, subject: Subject, tools: list[Tool], trace: Trace, attempt: int) -> str:
        """Plan, run the tools, and answer (see :class:`ToolMethod`)."""
        example = subject
        task_text = self.task_text(subject)
        prompt = self.planner_prompt(task_text, tools)
        prefix = "rewoo/paper_" if self._paper else "rewoo/"
        step = trace.add(TraceStep(
            kind="plan", name="planner", prompt_name=prefix + "planner",
            arguments={"attempt": attempt},
        ))  # fmt: skip
        constraint = self._plan_constraint(tools)
        spec: ReplySpec[str] = ReplySpec(
            constraint=constraint,
            reasks=1 if constraint is not None else 0,
            max_tokens=self.settings.planner_max_tokens,
            stop=self._planner_stop(),
            temperature=self.settings.temperature,
        )
        text = self._ask(step, prompt, spec, "rewoo/planner")
        reply = text if self._paper else "Plan:" + text
        try:
            plan = parse_worker_plan_paper(reply) if self._paper else parse_worker_plan(reply)
        except ParseError as err:
            step.error = str(err)
            raise RunFailed(f"the plan could not be read: {err}") from None
        plan = bounded(plan, self.settings.max_steps)
        step.arguments.update(
            steps=[s.model_dump() for s in plan.steps], format=plan.format,
            plans=plan.plans, malformed=plan.malformed, warnings=plan.warnings,
        )  # fmt: skip
        if not plan.steps:
            step.error = "no evidence step could be read; the solver answers without evidence"
        workers = self.workers if tools is self.tools else self.workers_for(tools)
        evidence = workers.run(plan, trace)
        worker_log = self._worker_log(plan, evidence, task_text)
        # A table task's solver reads the question, not the table: the evidence holds it.
        asked = question_text(subject.example, self.task) if subject.tables else task_text
        solver_prompt = self.solver_prompt(asked, worker_log)
        solver = trace.add(TraceStep(kind="answer", name="solver", prompt_name=prefix + "solver"))
        spec = ReplySpec[str](
            max_tokens=self.settings.solver_max_tokens,
            stop=self.settings.solver_stop,
            temperature=self.settings.temperature,
        )
        raw = self._ask(solver, solver_prompt, spec, "rewoo/solver")
        note = None
        if self._paper and self.task == "hotpotqa":
            answer = raw.strip("\n")
        else:
            answer, note = self._answer(raw, example, plan, evidence)
        if not answer.strip() and not self._paper:
            solver.error = note or "no answer"
            return self._fallback(example, asked, trace)
        solver.arguments["answer"] = answer
        solver.note = note
        return answer

    def _planner_stop(self) -> tuple[str, ...]:
        r"""The planner's stop strings, with the step bound (``\n#E5`` for 4 steps)."""
        bound = self.settings.max_steps
        return self.settings.stop + ((f"\n#E{bound + 1}",) if bound is not None else ())

    def _fallback(self, example: Subject, task_text: str, trace: Trace) -> str:
        """Default profile: the solver gave no answer, so ask the question once without evidence."""
        step = trace.add(TraceStep(
            kind="answer", name="fallback", prompt_name="rewoo/fallback",
            note="the solver gave no answer; asked the question without evidence",
        ))  # fmt: skip
        spec = ReplySpec[str](
            max_tokens=self.settings.solver_max_tokens,
            stop=("\nQ:",),
            temperature=self.settings.temperature,
        )
        prompt = render("rewoo/fallback", short_question=_one_line(task_text))
        answer = final_answer(self._ask(step, prompt, spec, "rewoo/fallback"), example, self.task)
        step.arguments["answer"] = answer
        return answer

    def _answer(
        self, raw: str, example: Subject, plan: ParsedPlan, evidence: dict[str, str]
    ) -> tuple[str, str | None]:
        """The solver's answer; lines that merely echo the plan format are skipped.

        Default profile only: when the solver reply holds nothing but echoed plan lines,
        the last successful short evidence (at most 20 words, so an answer rather than a
        retrieved paragraph) is the answer, and a note says so.
        """
        if self._paper:
            return final_answer(raw, example, self.task), None
        lines = [line for line in raw.splitlines() if line.strip()]
        kept = [line for line in lines if not _ECHO.match(line)]
        if kept:
            return final_answer("\n".join(kept), example, self.task), None
        for step in reversed(plan.steps):
            text = evidence.get(step.var, "")
            if text and not is_no_evidence(text) and len(text.split()) <= _SHORT_EVIDENCE:
                note = f"the solver only echoed the plan; answered with the evidence of {step.var}"
                return final_answer(text, example, self.task), note
        return final_answer("", example, self.task), "the solver gave no answer"

    # ------------------------------------------------------------------ workers

    def _worker_log(self, plan: ParsedPlan, evidence: dict[str, str], task_text: str) -> str:
        """Each plan with its evidence (default: focused on the question and the plan)."""
        if self._paper:
            try:
                return "".join(
                    f"{p}\nEvidence:\n{evidence['#E' + str(i + 1)]}\n"
                    for i, p in enumerate(plan.plans)
                )
            except KeyError as err:
                raise RunFailed(f"a plan has no evidence {err} (plans paired by index)") from None
        return worker_log(plan.steps, evidence, task_text, self.settings.max_evidence_chars)
