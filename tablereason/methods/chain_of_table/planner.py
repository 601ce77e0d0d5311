"""The Chain-of-Table planner: the next-operation graph and one planning step.

The graph (REFERENCE.md 1.5) is a DAG, so each operation runs at most once. Skipped
operations never advance the graph and are removed from every later choice.
"""

from __future__ import annotations

from tablereason.methods.chain_of_table import parse as P
from tablereason.methods.chain_of_table import views as V
from tablereason.methods.chain_of_table.session import Session, finish, timed_step
from tablereason.prompts.render import render, template

INIT = "<init>"
END = P.END

GRAPH: dict[str, tuple[str, ...]] = {
    INIT: ("add_column", "select_row", "select_column", "group_column", "sort_column"),
    "add_column": ("select_row", "select_column", "group_column", "sort_column", END),
    "select_row": ("select_column", "group_column", "sort_column", END),
    "select_column": ("group_column", "sort_column", END),
    "group_column": ("sort_column", END),
    "sort_column": (END,),
}


def allowed_next(session: Session) -> list[str]:
    """Operations allowed after the kept chain, minus every skipped operation.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> s = NS(chain=[NS(op="select_row", kept=True), NS(op="group_column", kept=False)])
        >>> allowed_next(s)
        ['select_column', 'sort_column', '<END>']
    """
    kept = [e.op for e in session.chain if e.kept]
    skipped = {e.op for e in session.chain if not e.kept}
    last = kept[-1] if kept else INIT
    return [op for op in GRAPH[last] if op not in skipped]


def chain_text(session: Session) -> str:
    """The kept chain as the planner continues it: ``f_a(..) -> f_b(..) ->`` or ``""``."""
    kept = [e.text for e in session.chain if e.kept]
    return " -> ".join(kept) + " ->" if kept else ""


def options_text(allowed: list[str]) -> str:
    """``f_a() or f_b() or <END>``, as the planning prompt lists the choices.

    Example:
        >>> options_text(["sort_column", "<END>"])
        'f_sort_column() or <END>'
    """
    return " or ".join(op if op == END else f"f_{op}()" for op in allowed)


def planning_prompt(session: Session, allowed: list[str]) -> tuple[str, str]:
    """The planning prompt and its template name for the session's profile.

    The paper prompt never ends in a space. Before the first operation the reference's
    prompt ends ``Function Chain: `` (nothing after the colon but a space); the
    reference sends it as a chat message, so the model never continues from that
    space. Continued as raw text, it is a lone space token: tokenizers such as Gemma's
    write the chain's first call as one token with its leading space (`` f``), and after
    a bare space the likeliest tokens are digits, so a small model writes ``1) ...`` or a
    run of ``0``. Ending at the colon lets the model write `` f_...`` itself.
    """
    table = session.table
    if session.paper:
        demos = "".join(
            template(session.prompt_name(f"plan_{op}")) + "\n\n" for op in allowed if op != END
        )
        demos += template(session.prompt_name("plan_chains")) + "\n\n"
        name = session.prompt_name("plan")
        block = V.pipe_block(None, table.columns, table.rows(session.settings.view_rows))
        prompt = render(
            name,
            demos=demos,
            table=block,
            label=session.label,
            question=session.question,
            options=options_text(allowed),
            chain=chain_text(session),
        )
        return prompt.removesuffix(" "), name
    if session.large is not None:
        from tablereason.methods.chain_of_table.large import planning_prompt as large_prompt

        return large_prompt(session, allowed)
    name = session.prompt_name("efficient_plan")
    numbers, rows = session.view()
    prompt = render(
        name,
        chains=template(session.prompt_name("efficient_plan_chains")),
        table=V.pipe_block(None, table.columns, rows, numbers),
        label=session.label,
        question=session.question,
        options=options_text(allowed),
        chain=chain_text(session),
    )
    return prompt, name


def next_operation(session: Session) -> str:
    """Choose the next operation (or ``<END>``), recording a ``plan`` step in the trace.

    * A single allowed option is taken without a model call.
    * ``reuse_plan``: the rest of the last generated chain is followed while it names
      an allowed operation. When it does not, the planner is asked again with
      ``replan_after_chain``; without it the chain ends there.
    * Otherwise the first allowed name of the generated chain wins; none means ``<END>``.
    """
    allowed = allowed_next(session)
    step = timed_step(session.trace, "plan", "plan")
    step.arguments["allowed"] = list(allowed)
    choice: str | None = None
    if not allowed:
        choice, step.note = END, "no operation left; no model call"
    elif len(allowed) == 1:
        choice, step.note = allowed[0], "single option; no model call"
    elif session.settings.reuse_plan and session.proposals:
        queue = session.proposals
        for i, name in enumerate(queue):
            if name in allowed:
                choice, session.proposals = name, queue[i + 1 :]
                step.note = "followed the previously generated chain; no model call"
                break
    settings = session.settings
    used_up = session.plan_calls and settings.reuse_plan and not settings.replan_after_chain
    if choice is None and used_up:
        choice = END
        step.note = "the generated chain is used up; ending without a model call"
    if choice is None:
        prompt, step.prompt_name = planning_prompt(session, allowed)
        text = session.ask(
            step,
            prompt,
            max_tokens=200 if session.paper else 64,
            stop=("\n\n",) if session.paper else ("\n",),
        )[0]
        session.plan_calls += 1
        names = P.parse_plan(text)
        step.arguments["proposed"] = names
        if session.settings.plan_arguments and not session.paper:
            session.planned = P.parse_plan_arguments(text)
            session.planned_rows = session.table.num_rows
        choice = P.first_allowed(names, allowed)
        if choice is None:
            choice = END
            step.error = "no allowed operation in the generated chain; ending"
        elif session.settings.reuse_plan:
            session.proposals = names[names.index(choice) + 1 :]
    step.name = choice
    step.arguments["chosen"] = choice
    finish(step)
    return choice
