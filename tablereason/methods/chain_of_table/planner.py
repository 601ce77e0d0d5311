"""The Chain-of-Table planner: the next-operation graph, the planning prompts, one planning step.

The graph (REFERENCE.md 1.5) is a DAG, so each operation runs at most once. Skipped
operations never advance the graph and are removed from every later choice. A
:class:`Planner` lives for one question and remembers the last generated chain: the
names still to follow (``reuse_plan``) and the arguments it gave (``plan_arguments``).
"""

from __future__ import annotations

from collections.abc import Sequence

from tablereason.methods.chain_of_table.chain_arguments import ChainArgument
from tablereason.methods.chain_of_table.parse import (
    END,
    first_allowed,
    parse_chain,
    parse_chain_arguments,
)
from tablereason.methods.chain_of_table.session import Session, finish, timed_step
from tablereason.methods.chain_of_table.state import ChainEntry, ChainState
from tablereason.methods.chain_of_table.views import pipe_block
from tablereason.prompts.render import render, template

INIT = "<init>"

GRAPH: dict[str, tuple[str, ...]] = {
    INIT: ("add_column", "select_row", "select_column", "group_column", "sort_column"),
    "add_column": ("select_row", "select_column", "group_column", "sort_column", END),
    "select_row": ("select_column", "group_column", "sort_column", END),
    "select_column": ("group_column", "sort_column", END),
    "group_column": ("sort_column", END),
    "sort_column": (END,),
}


def allowed_next(chain: Sequence[ChainEntry]) -> list[str]:
    """Operations allowed after the kept chain, minus every skipped operation.

    Example:
        >>> chain = [ChainEntry("select_row", True, ""), ChainEntry("group_column", False, "")]
        >>> allowed_next(chain)
        ['select_column', 'sort_column', '<END>']
    """
    kept = [e.op for e in chain if e.kept]
    skipped = {e.op for e in chain if not e.kept}
    last = kept[-1] if kept else INIT
    return [op for op in GRAPH[last] if op not in skipped]


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


def planning_prompt(session: Session, state: ChainState, allowed: list[str]) -> tuple[str, str]:
    """The planning prompt and its template name for the session's profile and mode.

    The paper and large-table prompts never end in a space. Before the first operation
    the reference's prompt ends ``Function Chain: `` (nothing after the colon but a
    space); the reference sends it as a chat message, so the model never continues
    from that space. Continued as raw text, it is a lone space token: tokenizers such
    as Gemma's write the chain's first call as one token with its leading space
    (`` f``), and after a bare space the likeliest tokens are digits, so a small model
    writes ``1) ...`` or a run of ``0``. Ending at the colon lets the model write
    `` f_...`` itself.
    """
    table = state.table
    common = {
        "label": session.label,
        "question": session.question,
        "options": options_text(allowed),
        "chain": chain_text(state.chain),
    }
    if session.rules.reference_prompts:
        demos = "".join(
            template(session.prompt_name(f"plan_{op}")) + "\n\n" for op in allowed if op != END
        )
        demos += template(session.prompt_name("plan_chains")) + "\n\n"
        name = session.prompt_name("plan")
        block = pipe_block(None, table.columns, table.rows(session.settings.view_rows))
        return render(name, demos=demos, table=block, **common).removesuffix(" "), name
    if session.large is not None:
        name = session.prompt_name("large_plan")
        prompt = render(
            name,
            chains=template(session.prompt_name("large_plan_chains")),
            table=session.shown_block(table),
            **common,
        )
        return prompt.removesuffix(" "), name
    name = session.prompt_name("efficient_plan")
    chains = template(session.prompt_name("efficient_plan_chains"))
    return render(name, chains=chains, table=session.shown_block(table), **common), name


class Planner:
    """Chooses each next operation for one question; remembers the last generated chain.

    Attributes:
        proposals: Operation names of the last generated chain not yet followed.
        arguments: The argument text of each operation that chain named (efficient
            profile with ``plan_arguments`` only).
        rows: Rows of the table when that chain was generated.
        calls: Planning calls made so far.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.proposals: list[str] = []
        self.arguments: dict[str, str] = {}
        self.rows: int | None = None
        self.calls = 0

    def argument(self, op: str) -> ChainArgument | None:
        """The argument the last generated chain gave ``op``, if it gave one."""
        text = self.arguments.get(op)
        if text is None or self.rows is None:
            return None
        return ChainArgument(text=text, rows=self.rows)

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
            prompt, step.prompt_name = planning_prompt(session, state, allowed)
            reply = session.rules.plan_reply
            text = session.ask(step, prompt, max_tokens=reply.max_tokens, stop=reply.stop)[0]
            self.calls += 1
            names = parse_chain(text)
            step.arguments["proposed"] = names
            if settings.plan_arguments and session.rules.chain_arguments:
                self.arguments = parse_chain_arguments(text)
                self.rows = state.table.num_rows
            choice = first_allowed(names, allowed)
            if choice is None:
                choice = END
                step.error = "no allowed operation in the generated chain; ending"
            elif settings.reuse_plan:
                self.proposals = names[names.index(choice) + 1 :]
        step.name = choice
        step.arguments["chosen"] = choice
        finish(step)
        return choice
