"""The add-column step: ask for a new column's values, add it when the acceptance rules pass.

Three ways to ask, by mode and settings: the large-table mode asks for an expression
(:func:`tablereason.methods.chain_of_table.large.add_column`);
``add_column_per_row`` asks as the reference does (3 values from a first call, then
one call per further row); otherwise every row in one call per chunk of
``add_column_chunk_rows`` rows. The generated chain's arguments are never applied
here outside the large-table mode: a new column needs a value per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tablereason.errors import ParseError, TableError
from tablereason.methods.chain_of_table import large
from tablereason.methods.chain_of_table.chain_arguments import ChainArgument
from tablereason.methods.chain_of_table.parse import AddColumnReply, parse_add_column_rows
from tablereason.methods.chain_of_table.reference_parse import (
    parse_add_column_paper,
    parse_add_column_row_paper,
)
from tablereason.methods.chain_of_table.session import Session, timed_step
from tablereason.methods.chain_of_table.state import StepResult, keep, skip
from tablereason.methods.chain_of_table.views import pipe_block
from tablereason.prompts.render import render

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import TraceStep


def add_column_rejection(
    header: Sequence[str],
    columns: Sequence[Sequence[str]],
    name: str,
    values: Sequence[str],
    *,
    paper: bool,
) -> str | None:
    """Why a new column is rejected (REFERENCE.md 1.6.1 rules 3-8), or ``None``.

    The efficient rules (``paper=False``) compare names and the substring test
    case-insensitively and accept identical values on a one-row table.

    Example:
        >>> add_column_rejection(["a"], [["x1", "x2"]], "b", ["x", "x"], paper=True)
        'all new values are identical'
    """
    fold = (lambda s: s) if paper else str.casefold
    if name.startswith("number of"):
        return "the name starts with 'number of'"
    if len(set(values)) == 1 and (paper or len(values) > 1):
        return "all new values are identical"
    if any(v.strip() == "" for v in values):
        return "a new value is empty"
    if fold(name) in {fold(h) for h in header}:
        return f"a column named {name!r} already exists"
    if any(list(values) == list(col) for col in columns):
        return "the new column repeats an existing column"
    if not any(all(fold(values[i]) in fold(old[i]) for i in range(len(old))) for old in columns):
        return "no existing column contains every new value"
    return None


def add_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Ask for a new column and add it when the acceptance rules pass."""
    if session.large is not None:
        return large.add_column(session, table, given)
    if session.settings.add_column_per_row:
        return _ask_per_row(session, table)
    return _ask_chunked(session, table)


def _added(
    session: Session, step: TraceStep, table: Table, name: str, values: list[str]
) -> StepResult:
    """The table with the new column, or a skip naming the rule it breaks."""
    rows = table.rows()
    columns = [[row[i] for row in rows] for i in range(len(table.columns))]
    reason = add_column_rejection(
        table.columns,
        columns,
        name,
        values,
        paper=session.rules.case_sensitive_add_column,
    )
    step.arguments.update(name=name, values=values)
    if reason is not None:
        return skip(step, "add_column", reason, table)
    try:
        added = table.add_column(name, values[: table.num_rows])
    except TableError as err:
        return skip(step, "add_column", str(err), table)
    return keep(step, "add_column", f"f_add_column({name})", table, after=added)


def _ask_per_row(session: Session, table: Table) -> StepResult:
    """The reference's way: name and 3 values from a first call, then one call per row."""
    name = session.prompt_name("add_column")
    step = timed_step(session.trace, "operation", "add_column", name)
    header, caption, rows = table.columns, table.caption, table.rows()
    first = pipe_block(caption, header, rows[:3])
    prompt = render(
        name,
        table=first,
        label=session.label,
        question=session.add_column_question,
        columns=", ".join(header),
    )
    text = session.ask(step, prompt, max_tokens=150)[0]
    try:
        reply = parse_add_column_paper(text)
    except ParseError as err:
        return skip(step, "add_column", f"unparsable reply: {err}", table)
    if reply.name in header:
        return skip(step, "add_column", f"a column named {reply.name!r} already exists", table)
    start = text.index("We extract the value from")
    prefix = text[start : text.index("The value:")] + "The value:"
    demo = first + "Explanation: " + text[start:]
    values = list(reply.values)
    for row in rows[3:]:
        row_prompt = render(
            session.prompt_name("add_column_row"),
            demo=demo,
            table=pipe_block(caption, header, [row]),
            prefix=prefix,
        )
        values.append(parse_add_column_row_paper(session.ask(step, row_prompt)[0]))
    return _added(session, step, table, reply.name, values)


def _ask_chunked(session: Session, table: Table) -> StepResult:
    """Every row's value, ``add_column_chunk_rows`` rows per call (the name from the first)."""
    name = session.prompt_name("efficient_add_column")
    step = timed_step(session.trace, "operation", "add_column", name)
    header, rows = table.columns, table.rows()
    size = session.settings.add_column_chunk_rows
    column: str | None = None
    values: list[str] = []
    for start in range(0, len(rows), size):
        numbers = list(range(start + 1, min(start + size, len(rows)) + 1))
        prompt = render(
            name,
            table=pipe_block(None, header, rows[start : start + size], numbers),
            label=session.label,
            question=session.question,
            name="" if column is None else f" {column}\n",
        )

        def parse(
            text: str, numbers: list[int] = numbers, known: str | None = column
        ) -> AddColumnReply:
            return parse_add_column_rows(text, numbers, name=known)

        reply = session.ask_parsed(
            step, prompt, parse, max_tokens=16 + 12 * len(numbers), stop=("\n\n", "*/")
        )
        if reply is None:
            return skip(step, "add_column", step.error or "unparsable reply", table)
        column = reply.name
        values.extend(reply.values)
    if column is None:
        return skip(step, "add_column", "the table has no rows", table)
    return _added(session, step, table, column, values)
