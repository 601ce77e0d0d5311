"""The Chain-of-Table planner: the planning prompts of each mode, and one planning step.

The next-operation graph comes from the step table (:data:`~.steps.GRAPH`, the
reference's graph: a DAG, so each operation runs at most once). Skipped operations never
advance the graph and are removed from every later choice. A :class:`Planner` lives for
one question and remembers the last generated chain: the names still to follow
(``reuse_plan``) and the arguments it gave (``plan_arguments``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tablereason.calls import ReplySpec
from tablereason.methods.chain_of_table.chain_arguments import ChainArgument
from tablereason.methods.chain_of_table.parse import (
    first_allowed,
    parse_chain,
    parse_chain_arguments,
)
from tablereason.methods.chain_of_table.session import Session, finish, timed_step
from tablereason.methods.chain_of_table.state import ChainEntry, ChainState
from tablereason.methods.chain_of_table.steps import END, GRAPH, INIT, allowed_next
from tablereason.methods.chain_of_table.views import pipe_block
from tablereason.prompts.render import render, template

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import TraceStep

__all__ = ["GRAPH", "INIT", "Planner", "allowed_next", "chain_text", "options_text"]


def chain_text(chain: Sequence[ChainEntry]) -> str:
    """The kept chain as the planner continues it: ``f_a(..) -> f_b(..) ->`` or ``""``."""
    kept = [e.text for e in chain if e.kept]
    return " -> ".join(kept) + " ->" if kept else ""


def options_text(allowed: list[str]) -> str:
    """``f_a() or f_b() or <END>``, as the planning prompt lists the choices.

    Example:
        >>> options_text(["sort_column", "<END>"])
        'f_sort_column() or <END>'
    """
    return " or ".join(op if op == END else f"f_{op}()" for op in allowed)


def _common(session: Session, state: ChainState, allowed: list[str]) -> dict[str, str]:
    return {
        "label": session.label,
        "question": session.question,
        "options": options_text(allowed),
        "chain": chain_text(state.chain),
    }


def paper_prompt(session: Session, state: ChainState, allowed: list[str]) -> tuple[str, str]:
    """The reference's planning prompt: a demo per allowed operation, the chain demos, 100 rows.

    It never ends in a space. Before the first operation the reference's prompt ends
    ``Function Chain: `` (nothing after the colon but a space); the reference sends it as
    a chat message, so the model never continues from that space. Continued as raw
    text, it is a lone space token: tokenizers such as Gemma's write the chain's first
    call as one token with its leading space (`` f``), and after a bare space the
    likeliest tokens are digits, so a small model writes ``1) ...`` or a run of ``0``.
    Ending at the colon lets the model write `` f_...`` itself.
    """
    table = state.table
    demos = "".join(
        template(session.prompt_name(f"plan_{op}")) + "\n\n" for op in allowed if op != END
    )
    demos += template(session.prompt_name("plan_chains")) + "\n\n"
    name = session.prompt_name("plan")
    block = pipe_block(None, table.columns, table.rows(session.settings.view_rows))
    prompt = render(name, demos=demos, table=block, **_common(session, state, allowed))
    return prompt.removesuffix(" "), name


def efficient_prompt(session: Session, state: ChainState, allowed: list[str]) -> tuple[str, str]:
    """The efficient planning prompt: one fixed operation list and chain demos, the bounded view.

    Like the paper prompt, it ends at the colon (or the chain's last ``->``), not in a
    space: after a lone space token the small model writes digits, and under the plan's
    grammar, which forbids them, it then takes the first operation listed
    (docs/chain_of_table.md, "The planner prompt does not end in a space").
    """
    name = session.prompt_name("plan")
    chains = template(session.prompt_name("plan_chains"))
    common = _common(session, state, allowed)
    prompt = render(name, chains=chains, table=session.shown_block(state.table), **common)
    return prompt.removesuffix(" "), name


def large_prompt(session: Session, state: ChainState, allowed: list[str]) -> tuple[str, str]:
    """The large-table planning prompt: conditions and expressions, the table's summary."""
    return efficient_prompt(session, state, allowed)


class Planner:
    """Chooses each next operation for one question; remembers the last generated chain.

    Attributes:
        proposals: Operation names of the last generated chain not yet followed.
        arguments: The argument text of each operation that chain named (efficient
            profile with ``plan_arguments`` only).
        named: The operations that chain named, with or without an argument.
        rows: Rows of the table when that chain was generated.
        columns: Its columns then.
        calls: Planning calls made so far.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.proposals: list[str] = []
        self.arguments: dict[str, str] = {}
        self.named: set[str] = set()
        self.rows: int | None = None
        self.columns: set[str] = set()
        self.calls = 0

    def argument(self, op: str, table: Table) -> ChainArgument | None:
        """The argument the last generated chain gave ``op``, now that the table is ``table``.

        ``None`` when the chain did not name ``op`` (or its arguments are not used);
        an empty text when it named ``op`` without an argument (``f_select_row()``).
        """
        if self.rows is None:
            return None
        added = tuple(c for c in table.columns if c not in self.columns)
        text = self.arguments.get(op)
        if text is None:
            return ChainArgument("", self.rows, added) if op in self.named else None
        return ChainArgument(text, self.rows, added)

    def _ask(self, step: TraceStep, state: ChainState, allowed: list[str]) -> str:
        """One planning call; the first allowed name of the generated chain (or ``<END>``)."""
        session, settings = self.session, self.session.settings
        way = session.mode.plan
        prompt, step.prompt_name = way.step(session, state, allowed)
        spec: ReplySpec[str] = session.spec(way, reasks=0, allowed=allowed, state=state)
        if spec.constraint is not None:  # a constrained chain carries every argument
            tokens = session.mode.plan_constrained_tokens
            spec = dataclasses.replace(spec, max_tokens=tokens, reasks=settings.repairs)
        text = session.ask(step, prompt, spec).text
        self.calls += 1
        names = parse_chain(text)
        step.arguments["proposed"] = names
        if settings.plan_arguments and session.mode.chain_arguments:
            self.arguments = parse_chain_arguments(text)
            self.named = {n for n in names if n != END}
            self.rows = state.table.num_rows
            self.columns = set(state.table.columns)
        choice = first_allowed(names, allowed)
        if choice is None:
            step.error = "no allowed operation in the generated chain; ending"
            return END
        if settings.reuse_plan:
            self.proposals = names[names.index(choice) + 1 :]
        return choice

    def next_operation(self, state: ChainState) -> str:
        """Choose the next operation (or ``<END>``), recording a ``plan`` step in the trace.

        * A single allowed option is taken without a model call.
        * ``reuse_plan``: the rest of the last generated chain is followed while it
          names an allowed operation. When it does not, the planner is asked again
          with ``replan_after_chain``; without it the chain ends there.
        * Otherwise the first allowed name of the generated chain wins; none means
          ``<END>``.
        """
        session, settings = self.session, self.session.settings
        allowed = allowed_next(state.chain)
        step = timed_step(session.trace, "plan", "plan")
        step.arguments["allowed"] = list(allowed)
        choice: str | None = None
        if not allowed:
            choice, step.note = END, "no operation left; no model call"
        elif len(allowed) == 1:
            choice, step.note = allowed[0], "single option; no model call"
        elif settings.reuse_plan and self.proposals:
            for i, name in enumerate(self.proposals):
                if name in allowed:
                    choice, self.proposals = name, self.proposals[i + 1 :]
                    step.note = "followed the previously generated chain; no model call"
                    break
        used_up = self.calls and settings.reuse_plan and not settings.replan_after_chain
        if choice is None and used_up:
            choice = END
            step.note = "the generated chain is used up; ending without a model call"
        if choice is None:
            choice = self._ask(step, state, allowed)
        step.name = choice
        step.arguments["chosen"] = choice
        finish(step)
        return choice
