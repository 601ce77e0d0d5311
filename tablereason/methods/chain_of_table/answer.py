"""The final query: the answer from the last table, and the group table after a group step."""

from __future__ import annotations

from tablereason.errors import ParseError
from tablereason.methods.chain_of_table import large_view, views
from tablereason.methods.chain_of_table.parse import (
    parse_short_answer,
    parse_verdict,
)
from tablereason.methods.chain_of_table.reference_parse import parse_verdict_paper
from tablereason.methods.chain_of_table.session import Session, finish, timed_step
from tablereason.methods.chain_of_table.state import ChainState
from tablereason.prompts.render import render
from tablereason.trace.record import TraceStep

Answer = str | list[str]
"""``"yes"``/``"no"`` for TabFact, a list of short strings for WikiTQ."""


def final_answer(session: Session, state: ChainState) -> Answer:
    """Ask for the answer from the final table (and the group table, if any).

    The answer step's arguments hold the answer, the chain record and the groups.
    """
    name = session.prompt_name(f"final_{session.task}")
    step = timed_step(session.trace, "answer", "final_query", name)
    table, groups = state.table, state.groups
    if session.large is not None:
        block = session.large.block(
            table, session.question, budget=session.settings.view_rows, caption=table.caption
        )
        group = large_view.group_block(groups.column, groups.counts, groups.total) if groups else ""
    else:
        numbers: list[int] | None = None
        if session.rules.reference_prompts:
            rows = table.rows(session.settings.view_rows)
        else:
            numbers, rows = session.view(table)
        block = views.pipe_block(table.caption, table.columns, rows, numbers)
        group = views.group_block(groups.column, groups.counts) if groups else ""
    prompt = render(name, table=block, group=group, question=session.question)
    step.table = table
    if session.rules.reference_prompts:
        answer = _ask_reference(session, step, prompt)
    else:
        answer = _ask_efficient(session, step, prompt)
    step.arguments["answer"] = answer
    step.arguments["chain"] = [entry.text for entry in state.chain]
    if groups:
        step.arguments["group"] = [groups.column, [list(g) for g in groups.counts]]
    finish(step)
    return answer


def _ask_reference(session: Session, step: TraceStep, prompt: str) -> Answer:
    """One call read the reference's way; an unreadable WikiTQ answer is empty."""
    text = session.ask(step, prompt, max_tokens=200)[0]
    if session.task == "tabfact":
        return parse_verdict_paper(text)
    try:
        return parse_short_answer(text)
    except ParseError as err:
        step.error = str(err)
        return []


def _ask_efficient(session: Session, step: TraceStep, prompt: str) -> Answer:
    """One line, parsed with the bounded re-ask; the last reply's own words when none parses."""
    if session.task == "tabfact":
        verdict = session.ask_parsed(step, prompt, parse_verdict, max_tokens=8, stop=("\n",))
        return verdict if verdict is not None else parse_verdict_paper(step.raw[-1])
    items = session.ask_parsed(step, prompt, parse_short_answer, max_tokens=48, stop=("\n",))
    return items if items is not None else []
