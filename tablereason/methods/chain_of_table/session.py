"""One Chain-of-Table question's fixed inputs and its model calls, each recorded in the trace.

A :class:`Session` does not change while the question runs: the evolving table, the
chain and the group facts are a :class:`~tablereason.methods.chain_of_table.state.ChainState`
that the run loop replaces after every step, and what the planner remembers lives
in the :class:`~tablereason.methods.chain_of_table.planner.Planner`. Every model call
goes through the session's :class:`~tablereason.calls.Door` (:meth:`Session.ask`) with a
:class:`~tablereason.calls.ReplySpec` made from the step's :class:`~.steps.Way`
(:meth:`Session.spec`), so the prompt, the replies, the re-asks and the constraint are
in the step's trace record.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from tablereason.calls import Door, Reply, ReplySpec
from tablereason.llm.base import LLM
from tablereason.methods.chain_of_table.large_view import LargeView
from tablereason.methods.chain_of_table.modes import EFFICIENT, Mode
from tablereason.methods.chain_of_table.settings import ChainOfTableSettings
from tablereason.methods.chain_of_table.steps import STEPS, Way
from tablereason.methods.chain_of_table.views import pipe_block, view_rows
from tablereason.prompts.render import PromptRenderError, template
from tablereason.trace.record import Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.constraints import Constraint
    from tablereason.table.value import Table

T = TypeVar("T")
Task = Literal["tabfact", "wikitq"]
PROMPTS = "chain_of_table"


@cache
def _prompt_in(folders: tuple[str, ...], name: str) -> str:
    for folder in folders:
        full = f"{PROMPTS}/{folder}/{name}"
        try:
            template(full)
        except PromptRenderError:
            continue
        return full
    raise PromptRenderError(f"no Chain-of-Table prompt {name!r} in the folders {list(folders)}")


@dataclass(frozen=True)
class Session:
    """What stays fixed for one question: model, settings, mode, question, trace, view cache.

    Attributes:
        llm: The model asked.
        settings: The run's settings.
        task: ``"tabfact"`` or ``"wikitq"``.
        question: The question or statement (lower-cased when the settings say so).
        add_column_question: The question the reference's add-column prompt shows
            (Dater's cleaned statement, digits masked in the paper profile).
        trace: The question's trace; every step adds to it.
        mode: The mode the question runs in (:mod:`~tablereason.methods.chain_of_table.modes`).
        large: The large-table mode's view cache, or ``None`` outside that mode.
        door: The door every model call goes through (made from the other fields).
    """

    llm: LLM
    settings: ChainOfTableSettings
    task: Task
    question: str
    add_column_question: str
    trace: Trace
    mode: Mode = EFFICIENT
    large: LargeView | None = None
    door: Door = field(init=False)

    def __post_init__(self) -> None:
        system = template(f"{PROMPTS}/paper/system") if self.settings.chat_messages else None
        door = Door(
            self.llm, site=PROMPTS, constrain=self.settings.constrain, system=system,
            sampling=self.settings.sampling(),
        )  # fmt: skip
        object.__setattr__(self, "door", door)

    @property
    def label(self) -> str:
        """How the prompts call the input: ``Statement`` (TabFact) or ``Question`` (WikiTQ)."""
        return "Statement" if self.task == "tabfact" else "Question"

    def prompt_name(self, name: str) -> str:
        """The full template name of the mode's prompt ``name`` (its folders in order).

        Example:
            >>> from tablereason.llm import ScriptedLLM
            >>> from tablereason.methods.chain_of_table.modes import LARGE
            >>> from tablereason.methods.chain_of_table.settings import PROFILES
            >>> s = Session(ScriptedLLM(replies=[]), PROFILES.get("efficient"), "wikitq",
            ...             "q", "q", Trace(), mode=LARGE)
            >>> s.prompt_name("select_row"), s.prompt_name("group_column")
            ('chain_of_table/large/select_row', 'chain_of_table/efficient/group_column')
        """
        return _prompt_in(self.mode.folders, name)

    def prompt_name_in(self, folder: str, name: str) -> str:
        """The full template name of prompt ``name`` in one mode's ``folder``."""
        return f"{PROMPTS}/{folder}/{name}"

    def way(self, op: str) -> Way:
        """How this session's mode runs step ``op``."""
        return STEPS.get(op).ways[self.mode.name]

    def step_prompt(self, op: str) -> str:
        """Full template name of step ``op``'s prompt in this mode."""
        prompt = self.way(op).prompt
        if prompt is None:
            raise PromptRenderError(f"step {op!r} has no prompt in the {self.mode.name} mode")
        return self.prompt_name(prompt)

    def view(
        self, table: Table, *, max_rows: int | None = None
    ) -> tuple[list[int], list[list[str]]]:
        """Row labels (1-based) and rows of ``table`` as prompts should show them."""
        limit = max_rows if max_rows is not None else self.settings.view_rows
        if self.settings.sample_view and max_rows is None:
            rows = table.rows()
            keep = view_rows(rows, self.question, limit)
            return [i + 1 for i in keep], [rows[i] for i in keep]
        first = table.rows(limit)  # only the rows shown are read
        return list(range(1, len(first) + 1)), first

    def shown_block(self, table: Table, *, caption: str | None = None) -> str:
        """``table`` as the efficient and large prompts show it (the mode's view)."""
        if self.large is not None:
            return self.large.block(
                table, self.question, budget=self.settings.view_rows, caption=caption
            )
        numbers, rows = self.view(table)
        return pipe_block(caption, table.columns, rows, numbers)

    def constrains(self, *, after: bool = False) -> bool:
        """Whether a grammar for a reply would be sent (the settings and the model allow it)."""
        return self.door.constrain and self.door.enforces("grammar", after=after)

    def constraint(self, builder: Callable[..., Any] | None, **context: Any) -> Constraint | None:
        """The constraint ``builder(self, **context)`` makes, when one would be sent."""
        if builder is None or not self.constrains():
            return None
        built: Constraint | None = builder(self, **context)
        return built

    def spec(
        self,
        way: Way,
        parse: Callable[[str], T] | None = None,
        *,
        reasks: int | None = None,
        n: int = 1,
        temperature: float = 0.0,
        rows: int = 0,
        max_tokens: int | None = None,
        **context: Any,
    ) -> ReplySpec[T]:
        """The reply spec of one call of ``way``: its limits, the parser, the constraint.

        Args:
            way: The step's way in this mode.
            parse: The reply's parser (``None``: the texts as they are).
            reasks: Re-asks allowed (default: ``settings.repairs``).
            n: Completions asked for.
            temperature: Sampling temperature.
            rows: Rows the call asks about (``way.per_row`` tokens each).
            max_tokens: The token limit, when not the way's.
            **context: What the way's constraint builder needs.
        """
        constraint = self.constraint(way.constraint_builder, **context)
        return ReplySpec(
            parse=parse,
            constraint=constraint,
            reasks=self.settings.repairs if reasks is None else reasks,
            max_tokens=(way.max_tokens if max_tokens is None else max_tokens) + way.per_row * rows,
            stop=way.stop,
            n=n,
            temperature=temperature,
            seed=self.settings.seed,
        )

    def ask(self, step: TraceStep, prompt: str, spec: ReplySpec[T]) -> Reply[T]:
        """One call through the door; its prompt, replies, usage and re-asks go to ``step``."""
        return self.door.ask(step, prompt, spec)


def timed_step(trace: Trace, kind: str, name: str, prompt_name: str | None = None) -> TraceStep:
    """Add a new step to ``trace`` and start timing it (:meth:`TraceStep.start`)."""
    return trace.add(TraceStep(kind=kind, name=name, prompt_name=prompt_name)).start()


def finish(step: TraceStep) -> TraceStep:
    """Stop timing a step of :func:`timed_step`: ``duration_s`` is its run time."""
    return step.stop()


def mask_digits(text: str) -> str:
    """Replace every run of digits with ``_`` (the reference's add-column statement).

    Example:
        >>> mask_digits("won 12 of 30 games")
        'won _ of _ games'
    """
    return re.sub(r"\d+", "_", text)
