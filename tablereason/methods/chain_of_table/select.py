"""The two selection steps: keep the rows, or the columns, the model names.

With the reference's rules (``rules.always_sample_selection``, or ``select_samples``
above 1) the model is sampled ``select_samples`` times and the ``select_union``
top-voted selections are united (the reference's rank-weight vote,
:func:`~tablereason.methods.chain_of_table.reference_parse.rank_votes`); otherwise
one selection is asked for, with the bounded re-ask. Nothing usable keeps every row
or column (``f_select_row(*)``), as the reference does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tablereason.errors import ParseError
from tablereason.methods.chain_of_table import large
from tablereason.methods.chain_of_table.chain_arguments import (
    ChainArgument,
    from_chain,
    take_fallback,
)
from tablereason.methods.chain_of_table.parse import list_body, match_columns, parse_rows
from tablereason.methods.chain_of_table.reference_parse import (
    parse_column_key_paper,
    parse_row_key_paper,
    rank_votes,
)
from tablereason.methods.chain_of_table.session import Session, timed_step
from tablereason.methods.chain_of_table.state import StepResult, keep
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


def _ask_selection(session: Session, step: TraceStep, prompt: str, key: Key) -> set[str] | None:
    """Sampled (voting) or single-shot selection; ``None`` when nothing parsed."""
    settings, rules = session.settings, session.rules
    if settings.select_samples > 1 or rules.always_sample_selection:
        texts = session.ask(
            step,
            prompt,
            n=settings.select_samples,
            temperature=settings.select_temperature,
            max_tokens=rules.selection_reply.max_tokens,
            stop=rules.selection_reply.stop,
        )
        union = _voted(session, texts, key)
        return union or None

    def strict(text: str) -> tuple[str, ...]:
        found = key(text)
        if found is None:
            raise ParseError("no selection in the reply", raw=text, expected="a list of items")
        return found

    picked = session.ask_parsed(step, prompt, strict, max_tokens=60, stop=("])", "\n"))
    return None if picked is None else set(picked)


def select_row(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Keep the rows the model names; all rows when it names none (``f_select_row(*)``)."""
    if session.large is not None:
        return large.select_row(session, table, given)
    name = session.step_prompt("select_row")
    step = timed_step(session.trace, "operation", "select_row", name)
    if session.rules.reference_prompts:
        picked = _rows_reference(session, step, name, table)
    else:
        picked = _rows_efficient(session, step, name, table, given)
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


def _rows_reference(session: Session, step: TraceStep, name: str, table: Table) -> set[str] | None:
    """The reference's prompt (caption, stripped table, lower-case label) and its vote."""
    numbers, rows = session.view(table)
    prompt = render(
        name,
        table=pipe_block(table.caption, table.columns, rows, numbers, stripped=True),
        label=session.label.lower(),
        question=session.question,
    )
    return _ask_selection(session, step, prompt, parse_row_key_paper)


def _rows_efficient(
    session: Session, step: TraceStep, name: str, table: Table, given: ChainArgument | None
) -> set[str] | None:
    """The chain's rows when they name rows of this table; else the fallback or a call."""
    numbers, rows = session.view(table)
    prompt = render(
        name,
        table=pipe_block(None, table.columns, rows, numbers),
        label=session.label,
        question=session.question,
    )

    def key(text: str) -> tuple[str, ...] | None:
        try:
            found = parse_rows(text, table.num_rows)
        except ParseError:
            return None
        return ("*",) if found is None else tuple(str(i + 1) for i in found)

    planned = None
    if given is not None and given.rows == table.num_rows:  # row numbers of this table
        planned = from_chain(step, given, key)
    if planned:
        return set(planned)
    if take_fallback(session, step):
        step.note = "the generated chain names no row; all rows kept, no model call"
        return None
    return _ask_selection(session, step, prompt, key)


def select_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Keep the columns the model names; all columns when none matches."""
    name = session.step_prompt("select_column")
    step = timed_step(session.trace, "operation", "select_column", name)
    header = table.columns
    if session.rules.reference_prompts:
        _, rows = session.view(table)
        prompt = render(
            name,
            table=json_block(table.caption, header, rows),
            label=session.label.lower(),
            question=session.question,
        )
        union = _ask_selection(session, step, prompt, parse_column_key_paper) or set()
        chosen = [h for h in header if h.lower() in union]
    else:
        union = _columns_efficient(session, step, name, table, given)
        chosen = [h for h in header if h in union]
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


def _columns_efficient(
    session: Session, step: TraceStep, name: str, table: Table, given: ChainArgument | None
) -> set[str]:
    """The chain's columns when they name columns of the table; else the fallback or a call."""
    prompt = render(
        name,
        table=session.shown_block(table),
        label=session.label,
        question=session.question,
    )

    def key(text: str) -> tuple[str, ...] | None:
        return tuple(match_columns(list_body(text), table.columns)) or None

    planned = from_chain(step, given, key)
    if planned:
        return set(planned)
    if take_fallback(session, step):
        step.note = (
            "the generated chain names no column of the table; all columns kept, no model call"
        )
        return set()
    return _ask_selection(session, step, prompt, key) or set()
