"""Chameleon (Lu et al., NeurIPS 2023): a planned chain of modules over a shared cache.

The planner picks a module sequence for each question; the modules run in order
over one :class:`~.cache.ChameleonCache`; the answer generator turns the program
value or the solution into the answer. ``profile="paper"`` reproduces the
published code (see :mod:`.settings`); ``profile="default"`` fixes its bugs.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.datasets.example import Example
    >>> llm = ScriptedLLM(replies=['["solution_generator", "answer_generator"]',
    ...                            "Dogs have fur and feed milk to their young. The answer is B."])
    >>> ex = Example(dataset="scienceqa", id="7", question="Which is a mammal?", answer="dog",
    ...              choices=["frog", "dog"], metadata={"grade": "grade3", "subject": "x"})
    >>> Chameleon(llm, task="scienceqa").run(ex).answer
    'dog'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError, TableReasonError
from tablereason.llm.base import LLM
from tablereason.methods.chameleon import scienceqa_modules, tabmwp_modules
from tablereason.methods.chameleon.cache import ChameleonCache
from tablereason.methods.chameleon.inventory import abbreviate, modules_task, task_modules
from tablereason.methods.chameleon.planner import (
    check_plan,
    choose_plan,
    merge_program_steps,
    module_descriptions,
)
from tablereason.methods.chameleon.session import ChainRun
from tablereason.methods.chameleon.settings import profile_settings
from tablereason.methods.chameleon.table_view import shown
from tablereason.methods.constraints.tools import module_list
from tablereason.prompts.render import render, template_hash, template_names
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.constraints import Constraint
    from tablereason.sandbox.python import PythonSandbox
    from tablereason.table.value import Table
    from tablereason.tools.base import Tool

Runner = Callable[[ChainRun], None]


class Chameleon:
    """Chameleon for TabMWP (math over a table) and ScienceQA (multiple-choice science).

    Args:
        llm: Any backend of the :class:`~tablereason.llm.LLM` protocol.
        task: ``"tabmwp"``, ``"scienceqa"``, or ``"wikitq"``: a question over one's own
            table (``ask``'s default task), answered with the TabMWP modules; a large
            table is shown as a bounded view (``view_rows``).
        profile: ``"default"`` or ``"paper"``.
        plan: A fixed module sequence instead of the planner (how the chain-of-thought
            and program-of-thought baselines run). It must pass the validity rules.
        tools: ScienceQA tools by role: ``"search"``, ``"captioner"``, ``"ocr"``.
        sandbox: Sandbox pool for programs (the shared default when None).
        **overrides: Fields of :class:`~.settings.ChameleonSettings` to change
            (``rl_cell_threshold=12``...).

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> Chameleon(ScriptedLLM(replies=[]), profile="paper").settings.rl_cell_threshold
        18
    """

    name: ClassVar[str] = "chameleon"
    takes_task: ClassVar[bool] = True

    def __init__(
        self,
        llm: LLM,
        task: str = "tabmwp",
        profile: str = "default",
        *,
        plan: Sequence[str] | None = None,
        tools: Mapping[str, Tool] | None = None,
        sandbox: PythonSandbox | None = None,
        **overrides: Any,
    ) -> None:
        self.asked_task = task
        task = modules_task(task)  # validates the task name
        self.llm = llm
        self.task = task
        self.settings = profile_settings(profile, task, **overrides)
        self.tools = dict(tools or {})
        unknown = set(self.tools) - {"search", "captioner", "ocr"}
        if unknown:
            raise ConfigurationError(
                f"unknown tool role(s) {sorted(unknown)}; use 'search', 'captioner', 'ocr'"
            )
        self.sandbox = sandbox
        self.fixed_plan = list(plan) if plan is not None else None
        if self.fixed_plan is not None:
            broken = check_plan(self.fixed_plan, task, self.settings)
            if broken:
                raise ConfigurationError(
                    f"fixed plan {self.fixed_plan} breaks rule(s) {broken}; "
                    f"modules of {task}: {task_modules(task)}"
                )
        self.runners: dict[str, Runner] = dict(
            tabmwp_modules.RUNNERS if task == "tabmwp" else scienceqa_modules.RUNNERS
        )

    def config(self) -> dict[str, Any]:
        """The run configuration: task, settings, fixed plan and a hash of every prompt."""
        return {
            "method": self.name,
            "task": self.task,
            "asked_task": self.asked_task,
            "plan": self.fixed_plan,
            "settings": self.settings.model_dump(mode="json"),
            "prompts": {n: template_hash(n) for n in template_names("chameleon")},
        }

    # ------------------------------------------------------------------ inputs

    def make_cache(self, example: Example) -> ChameleonCache:
        """The initial cache for ``example``."""
        md = example.metadata
        if self.task == "tabmwp":
            table = example.table
            if table is None:
                raise ConfigurationError(f"TabMWP example {example.id!r} has no table")
            rows = md.get("row_num") or table.num_rows + (
                1 if tabmwp_modules.has_header(table) else 0
            )
            return ChameleonCache(
                task="tabmwp", pid=example.id, question=example.question,
                choices=example.choices, unit=md.get("unit"),
                title=md.get("table_title") or table.caption, table=table,
                original_table=table, table_rows=int(rows),
                table_columns=int(md.get("column_num") or len(table.columns)),
            )  # fmt: skip
        choices = list(example.choices or [])
        if not choices:
            raise ConfigurationError(f"ScienceQA example {example.id!r} has no choices")
        grade = md.get("grade_number") or str(md.get("grade", "0")).removeprefix("grade")
        metadata = {
            "has_image": md.get("image") == "image.png",
            "grade": int(grade or 0),
            "subject": md.get("subject"),
            "topic": md.get("topic"),
            "category": md.get("category"),
            "skill": md.get("skill"),
        }
        return ChameleonCache(
            task="scienceqa", pid=example.id,
            question=scienceqa_modules.question_text(example.question, example.context, choices),
            plain_question=example.question, hint=example.context, choices=choices,
            metadata={**metadata, "image_file": md.get("image_file", "")},
            image=md.get("image") or "", caption=str(md.get("caption") or ""),
            ocr=str(md.get("ocr") or "[]"), lecture=str(md.get("lecture") or ""),
            data_folder=str(md.get("data_folder") or ""),
        )  # fmt: skip

    # ------------------------------------------------------------------ run

    def run(
        self,
        example: Example | Table,
        question: str | None = None,
        **fields: Any,
    ) -> Prediction:
        """Answer one example (or a table and a question, for TabMWP-style use).

        Args:
            example: A dataset :class:`Example`, or a :class:`Table`.
            question: The question, when ``example`` is a table.
            **fields: With a table: ``choices``, ``unit`` and ``title``.

        Returns:
            The prediction. ``raw_answer`` is the answer generator's raw value (what the
            published TabMWP scorer sees; also in its trace step). A model failure ends
            the run with ``Prediction.error`` set; bad replies never raise.
        """
        if not isinstance(example, Example):
            example = self._wrap(example, question, **fields)
        trace = Trace(method=f"{self.name}/{self.task}/{self.settings.profile}",
                      question=example.question)  # fmt: skip
        cache = self.make_cache(example)
        if cache.table is not None:
            trace.add(TraceStep(kind="input", name="table", table=cache.table))
        run = ChainRun(self.llm, self.settings, cache, trace, self.tools, self.sandbox)
        try:
            plan = self._plan(run)
            for module in merge_program_steps(plan):
                self.runners[module](run)
        except TableReasonError as err:
            trace.add(TraceStep(kind="error", name=type(err).__name__, error=str(err)))
            return Prediction(answer="", trace=trace, error=str(err))
        return Prediction(answer=cache.answer, trace=trace, raw_answer=cache.raw_answer)

    def __call__(self, example: Example) -> Prediction:
        """Same as :meth:`run` on an example, for code that calls the method as a function."""
        return self.run(example)

    def _wrap(self, table: Table, question: str | None, **fields: Any) -> Example:
        if question is None or self.task != "tabmwp":
            raise ConfigurationError(
                "run(table, question) is for TabMWP; pass a ScienceQA Example for ScienceQA"
            )
        unknown = set(fields) - {"choices", "unit", "title"}
        if unknown:
            raise ConfigurationError(
                f"unknown field(s) {sorted(unknown)}; use choices, unit, title"
            )
        return Example.from_table(
            table, question, dataset="tabmwp", choices=fields.get("choices"),
            metadata={"unit": fields.get("unit"), "table_title": fields.get("title")},
        )  # fmt: skip

    def planner_prompt(self, cache: ChameleonCache) -> str:
        """The planner prompt for one example."""
        if self.task == "tabmwp":
            table = cache.table
            return render(
                "chameleon/tabmwp_planner", modules=module_descriptions("tabmwp"),
                table=shown(table, cache.question, self.settings.view_rows),
                question=cache.question,
            )  # fmt: skip
        return render(
            "chameleon/scienceqa_planner", modules=module_descriptions("scienceqa"),
            question=cache.question, metadata=scienceqa_modules.metadata_text(cache.metadata),
        )  # fmt: skip

    def _plan_constraint(self, run: ChainRun) -> Constraint | None:
        """The planner's reply: a list of this task's module names (built only when sent)."""
        if not run.door.enforces("grammar"):
            return None
        return module_list(task_modules(self.task))

    def _plan(self, run: ChainRun) -> list[str]:
        step = run.step("planner", kind="plan")
        if self.fixed_plan is not None:
            plan, parsed, problem = list(self.fixed_plan), list(self.fixed_plan), None
            step.note = "fixed plan"
        else:
            prompt = self.planner_prompt(run.cache)
            reply = run.ask(step, prompt, prompt_name=f"{self.task}_planner",
                            max_tokens=self.settings.planner_max_tokens, stop=("\n\n",),
                            constraint=self._plan_constraint(run))  # fmt: skip
            plan, parsed, problem = choose_plan(reply, self.task, self.settings)
            run.cache.records["modules:input"] = prompt
            step.error = f"{problem}; using the default plan" if problem else None
        executed = merge_program_steps(plan)
        run.cache.records["modules:output"] = plan
        step.arguments = {"parsed": parsed, "plan": plan, "executed": executed,
                          "short": abbreviate(executed)}  # fmt: skip
        run.finish(step)
        return plan


def modules_used(prediction: Prediction) -> list[str]:
    """The plan a prediction ran (after merging), from its trace.

    Example:
        >>> modules_used(Prediction())
        []
    """
    for step in prediction.trace.steps:
        if step.kind == "plan":
            return list(step.arguments.get("executed", []))
    return []
