"""One Chain-of-Table question's fixed inputs and its model calls, each recorded in the trace.

A :class:`Session` does not change while the question runs: the evolving table, the
chain and the group facts are a :class:`~tablereason.methods.chain_of_table.state.ChainState`
that the run loop replaces after every step, and what the planner remembers lives
in the :class:`~tablereason.methods.chain_of_table.planner.Planner`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from tablereason.errors import ParseError
from tablereason.llm.base import LLM, Message, Request
from tablereason.methods.chain_of_table.large_view import LargeView
from tablereason.methods.chain_of_table.rules import ProfileRules, rules_for
from tablereason.methods.chain_of_table.settings import ChainOfTableSettings
from tablereason.methods.chain_of_table.views import pipe_block, view_rows
from tablereason.prompts.render import template
from tablereason.trace.record import Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

T = TypeVar("T")
Task = Literal["tabfact", "wikitq"]
PROMPTS = "chain_of_table"


@dataclass(frozen=True)
class Session:
    """What stays fixed for one question: model, settings, question, trace, view cache.

    Attributes:
        llm: The model asked.
        settings: The run's settings.
        task: ``"tabfact"`` or ``"wikitq"``.
        question: The question or statement (lower-cased when the settings say so).
        add_column_question: The question the reference's add-column prompt shows
            (Dater's cleaned statement, digits masked in the paper profile).
        trace: The question's trace; every step adds to it.
        large: The large-table mode's view cache, or ``None`` outside that mode.
    """

    llm: LLM
    settings: ChainOfTableSettings
    task: Task
    question: str
    add_column_question: str
    trace: Trace
    large: LargeView | None = None

    @property
    def rules(self) -> ProfileRules:
        """The profile's rules (:mod:`~tablereason.methods.chain_of_table.rules`)."""
        return rules_for(self.settings.profile)

    @property
    def label(self) -> str:
        """How the prompts call the input: ``Statement`` (TabFact) or ``Question`` (WikiTQ)."""
        return "Statement" if self.task == "tabfact" else "Question"

    def prompt_name(self, name: str) -> str:
        """Full template name for a Chain-of-Table prompt."""
        return f"{PROMPTS}/{name}"

    def step_prompt(self, op: str) -> str:
        """Full template name of an operation's prompt in the profile's family."""
        return self.prompt_name(self.rules.prompt_prefix + op)

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

    def shown_block(self, table: Table) -> str:
        """``table`` as the efficient prompts show it: the view rows, or the large-table summary."""
        if self.large is not None:
            return self.large.block(table, self.question, budget=self.settings.view_rows)
        numbers, rows = self.view(table)
        return pipe_block(None, table.columns, rows, numbers)

    def ask(
        self,
        step: TraceStep,
        prompt: str,
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 150,
        stop: Sequence[str] = (),
    ) -> list[str]:
        """Send one request; add its completions and usage to ``step``; return the texts."""
        common = {
            "n": n,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stop": tuple(stop),
            "seed": self.settings.seed if temperature > 0 else None,
            "call_site": f"{PROMPTS}/{step.name}",
        }
        if self.settings.chat_messages:
            system = template(self.prompt_name("system"))
            request = Request(
                messages=(
                    Message(role="system", content=system),
                    Message(role="user", content=prompt),
                ),
                **common,  # type: ignore[arg-type]
            )
        else:
            request = Request(prompt=prompt, **common)  # type: ignore[arg-type]
        completion = self.llm.complete(request)
        step.usage = step.usage + completion.usage
        texts = completion.texts or [""]
        step.raw.extend(texts)
        return texts

    def ask_parsed(
        self,
        step: TraceStep,
        prompt: str,
        parse: Callable[[str], T],
        *,
        max_tokens: int,
        stop: Sequence[str] = (),
    ) -> T | None:
        """Ask once, parse, and re-ask up to ``settings.repairs`` times on a parse failure.

        A re-ask appends the failed reply, what was wrong, and the prompt's last line, so
        the prompt prefix stays the same. Returns ``None`` (with ``step.error`` set) when
        every attempt fails.
        """
        current = prompt
        for attempt in range(self.settings.repairs + 1):
            text = self.ask(step, current, max_tokens=max_tokens, stop=stop)[0]
            try:
                value = parse(text)
            except ParseError as err:
                step.error = f"{err} (expected: {err.expected})"
                cue = prompt.rsplit("\n", 1)[-1]
                current = (
                    f"{prompt}{text}\n\nThat reply could not be read: {err}. "
                    f"Expected: {err.expected}. Answer again.\n{cue}"
                )
                continue
            if attempt:
                step.note = f"parsed after {attempt} re-ask(s); first error: {step.error}"
                step.error = None
            return value
        return None


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
