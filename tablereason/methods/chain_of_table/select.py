"""The two selection steps: keep the rows, or the columns, the model names.

The paper way samples ``select_samples`` replies to the reference's prompt and unites
the ``select_union`` top-voted selections (the reference's rank-weight vote,
:func:`~tablereason.methods.chain_of_table.reference_parse.rank_votes`). The efficient
way first tries the generated chain's argument, then asks one short structured reply
with the bounded re-ask (or samples and votes when ``select_samples`` is above 1). Nothing
usable keeps every row or column (``f_select_row(*)``), as the reference does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tablereason.errors import ParseError
from tablereason.methods.chain_of_table.chain_arguments import (
    ChainArgument,
    from_chain,
    reasks_for,
    take_fallback,
)
from tablereason.methods.chain_of_table.parse import column_list, parse_rows
from tablereason.methods.chain_of_table.reference_parse import (
    parse_column_key_paper,
    parse_row_key_paper,
    rank_votes,
)
from tablereason.methods.chain_of_table.session import Session, timed_step
from tablereason.methods.chain_of_table.state import StepResult, keep
from tablereason.methods.chain_of_table.steps import Way
from tablereason.methods.chain_of_table.views import json_block, pipe_block
from tablereason.prompts.render import render

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import TraceStep

Key = Callable[[str], tuple[str, ...] | None]
"""Reads one reply into a hashable selection (for the vote), or ``None``."""


def _voted(session: Session, texts: Sequence[str], key: Key) -> set[str]:
    ranked = rank_votes([key(t) for t in texts])
    union: set[str] = set()
    for chosen in ranked[: session.settings.select_union]:
        union.update(chosen)
    return union


def _ask_selection(
    session: Session,
    step: TraceStep,
    way: Way,
    prompt: str,
    key: Key,
    *,
    sample: bool,
    reasks: int | None = None,
    **context: Any,
) -> set[str] | None:
    """Sampled (voting) or single-shot selection; ``None`` when nothing parsed."""
    settings = session.settings
    if sample or settings.select_samples > 1:
        spec = session.spec(
            way, n=settings.select_samples, temperature=settings.select_temperature, reasks=0,
            **context,
        )  # fmt: skip
        union = _voted(session, session.ask(step, prompt, spec).texts, key)
        return union or None

    def strict(text: str) -> tuple[str, ...]:
        found = key(text)
        if found is None:
            raise ParseError("no selection in the reply", raw=text, expected="a list of items")
        return found

    picked = session.ask(step, prompt, session.spec(way, strict, reasks=reasks, **context)).value
    return None if picked is None else set(picked)


def _rows_kept(step: TraceStep, table: Table, picked: set[str] | None) -> StepResult:
    """The rows ``picked`` names (1-based, as text), or every row when it names none."""
    union = picked or set()
    indices = [j - 1 for j in range(1, table.num_rows + 1) if str(j) in union]
    if "*" in union or not indices:
        if picked is None and not step.note:
            step.note = "no selection parsed; all rows kept"
        return keep(step, "select_row", "f_select_row(*)", table, rows=["*"])
    text = ", ".join(f"row {k}" for k in range(1, len(indices) + 1))
    return keep(
        step,
        "select_row",
        f"f_select_row({text})",
        table,
        after=table.select_rows(indices),
        rows=[i + 1 for i in indices],
    )


def _columns_kept(step: TraceStep, table: Table, chosen: list[str]) -> StepResult:
    if not chosen:
        return keep(step, "select_column", "f_select_column(*)", table, columns=["*"])
    return keep(
        step,
        "select_column",
        f"f_select_column({', '.join(chosen)})",
        table,
        after=table.select_columns(chosen),
        columns=chosen,
    )


def paper_select_row(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """The reference's prompt (caption, stripped table, lower-case label), sampled and voted."""
    way = session.way("select_row")
    step = timed_step(session.trace, "operation", "select_row", session.step_prompt("select_row"))
    numbers, rows = session.view(table)
    prompt = render(
        session.step_prompt("select_row"),
        table=pipe_block(table.caption, table.columns, rows, numbers, stripped=True),
        label=session.label.lower(),
        question=session.question,
    )
    picked = _ask_selection(
        session, step, way, prompt, parse_row_key_paper, sample=session.mode.always_sample,
        table=table,
    )  # fmt: skip
    return _rows_kept(step, table, picked)


def row_key(table: Table) -> Key:
    """Reads an efficient select-row reply into its rows (``("*",)`` for every row)."""

    def key(text: str) -> tuple[str, ...] | None:
        try:
            found = parse_rows(text, table.num_rows)
        except ParseError:
            return None
        return ("*",) if found is None else tuple(str(i + 1) for i in found)

    return key


def efficient_select_row(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """The chain's rows when they name rows of this table; else the fallback or a call."""
    way = session.way("select_row")
    name = session.step_prompt("select_row")
    step = timed_step(session.trace, "operation", "select_row", name)
    key = row_key(table)
    picked: set[str] | None = None
    planned = None
    if given is not None and given.rows == table.num_rows:  # row numbers of this table
        planned = from_chain(step, given, key)
    if planned:
        picked = set(planned)
    elif take_fallback(session, step):
        step.note = "the generated chain names no row; all rows kept, no model call"
    else:
        numbers, rows = session.view(table)
        prompt = render(
            name,
            table=pipe_block(None, table.columns, rows, numbers),
            label=session.label,
            question=session.question,
        )
        reasks = reasks_for(given)
        picked = _ask_selection(
            session, step, way, prompt, key, sample=False, reasks=reasks, table=table
        )
    return _rows_kept(step, table, picked)


def paper_select_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """The reference's JSON prompt, sampled and voted; only lower-case names match."""
    way = session.way("select_column")
    name = session.step_prompt("select_column")
    step = timed_step(session.trace, "operation", "select_column", name)
    _, rows = session.view(table)
    prompt = render(
        name,
        table=json_block(table.caption, table.columns, rows),
        label=session.label.lower(),
        question=session.question,
    )
    union = _ask_selection(
        session, step, way, prompt, parse_column_key_paper, sample=session.mode.always_sample,
        table=table,
    ) or set()  # fmt: skip
    return _columns_kept(step, table, [h for h in table.columns if h.lower() in union])


def efficient_select_column(
    session: Session, table: Table, given: ChainArgument | None
) -> StepResult:
    """The chain's columns when they name columns of the table; else the fallback or a call."""
    way = session.way("select_column")
    name = session.step_prompt("select_column")
    step = timed_step(session.trace, "operation", "select_column", name)

    def key(text: str) -> tuple[str, ...] | None:
        return tuple(column_list(text, table.columns)) or None

    planned = from_chain(step, given, key)
    union: set[str] = set()
    if planned:  # with the columns the chain added, which it could not name
        union = set(planned) | set(given.added if given is not None else ())
    elif take_fallback(session, step):
        step.note = (
            "the generated chain names no column of the table; all columns kept, no model call"
        )
    else:
        prompt = render(
            name,
            table=session.shown_block(table),
            label=session.label,
            question=session.question,
        )
        reasks = reasks_for(given)
        picked = _ask_selection(
            session, step, way, prompt, key, sample=False, reasks=reasks, table=table
        )
        union = picked or set()
    return _columns_kept(step, table, [h for h in table.columns if h in union])
