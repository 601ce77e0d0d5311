"""The final query: the answer from the last table, and the group table after a group step.

Each mode has its own final query (:attr:`~.modes.Mode.final`): the paper way shows the
first rows and reads the reply the reference's way; the efficient way shows the bounded
view and reads one line, with the bounded re-ask; the large way shows the table's
summary and the largest groups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tablereason.errors import ParseError
from tablereason.methods.chain_of_table import large_view, views
from tablereason.methods.chain_of_table.parse import parse_short_answer, parse_verdict
from tablereason.methods.chain_of_table.reference_parse import parse_verdict_paper
from tablereason.methods.chain_of_table.session import Session, finish, timed_step
from tablereason.methods.chain_of_table.state import ChainState
from tablereason.prompts.render import render
from tablereason.trace.record import TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.methods.chain_of_table.steps import Way

Answer = str | list[str]
"""``"yes"``/``"no"`` for TabFact, a list of short strings for WikiTQ."""


def final_answer(session: Session, state: ChainState) -> Answer:
    """Ask for the answer from the final table (and the group table, if any).

    The answer step's arguments hold the answer, the chain record and the groups.
    """
    way = session.mode.final[session.task]
    answer: Answer = way.step(session, state, way)
    return answer


def _step(
    session: Session, state: ChainState, way: Way, block: str, group: str
) -> tuple[TraceStep, str]:
    """The answer step (timed from now) and the final prompt."""
    name = session.prompt_name(str(way.prompt))
    step = timed_step(session.trace, "answer", "final_query", name)
    step.table = state.table
    return step, render(name, table=block, group=group, question=session.question)


def _done(step: TraceStep, state: ChainState, answer: Answer) -> Answer:
    step.arguments["answer"] = answer
    step.arguments["chain"] = [entry.text for entry in state.chain]
    if state.groups:
        groups = state.groups
        step.arguments["group"] = [groups.column, [list(g) for g in groups.counts]]
    finish(step)
    return answer


def paper_final(session: Session, state: ChainState, way: Way) -> Answer:
    """The first rows and the groups; one call read the reference's way.

    An unreadable WikiTQ answer is empty.
    """
    table, groups = state.table, state.groups
    rows = table.rows(session.settings.view_rows)
    block = views.pipe_block(table.caption, table.columns, rows)
    group = views.group_block(groups.column, groups.counts) if groups else ""
    step, prompt = _step(session, state, way, block, group)
    text = session.ask(step, prompt, session.spec(way, reasks=0, task=session.task)).text
    if session.task == "tabfact":
        return _done(step, state, parse_verdict_paper(text))
    try:
        answer: Answer = parse_short_answer(text)
    except ParseError as err:
        step.error = str(err)
        answer = []
    return _done(step, state, answer)


def efficient_final(session: Session, state: ChainState, way: Way) -> Answer:
    """The bounded view and the groups; one line, parsed with the bounded re-ask."""
    table, groups = state.table, state.groups
    numbers, rows = session.view(table)
    block = views.pipe_block(table.caption, table.columns, rows, numbers)
    group = views.group_block(groups.column, groups.counts) if groups else ""
    return _ask_line(session, state, way, block, group)


def large_final(session: Session, state: ChainState, way: Way) -> Answer:
    """The table's summary and the largest groups (with how many there are in all)."""
    table, groups = state.table, state.groups
    block = session.shown_block(table, caption=table.caption)
    group = large_view.group_block(groups.column, groups.counts, groups.total) if groups else ""
    return _ask_line(session, state, way, block, group)


def _ask_line(session: Session, state: ChainState, way: Way, block: str, group: str) -> Answer:
    """One line, parsed with the bounded re-ask; the last reply's own words when none parses."""
    step, prompt = _step(session, state, way, block, group)
    if session.task == "tabfact":
        spec = session.spec(way, parse_verdict, task=session.task)
        verdict = session.ask(step, prompt, spec).value
        fallback = parse_verdict_paper(step.raw[-1]) if verdict is None else verdict
        return _done(step, state, fallback)
    spec_items = session.spec(way, parse_short_answer, task=session.task)
    items = session.ask(step, prompt, spec_items).value
    return _done(step, state, items if items is not None else [])
