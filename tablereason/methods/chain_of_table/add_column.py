"""The add-column step: ask for a new column's values, add it when the acceptance rules pass.

The paper way asks as the reference does (``add_column_per_row``: 3 values from a
first call, then one call per further row); the efficient way computes the column the
generated chain gives as ``name = expression``, with no call, and asks for the values of
a column the chain only names in one call per chunk of ``add_column_chunk_rows`` rows (a
chain that gives no name skips the step without a call). The large-table mode asks for
an expression when its chain gives none
(:func:`tablereason.methods.chain_of_table.large.add_column`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tablereason.calls import ReplySpec
from tablereason.errors import ParseError, TableError
from tablereason.methods.chain_of_table.chain_arguments import ChainArgument
from tablereason.methods.chain_of_table.large import computed_column, computed_column_rejection
from tablereason.methods.chain_of_table.parse import AddColumnReply, parse_add_column_rows
from tablereason.methods.chain_of_table.reference_parse import (
    parse_add_column_paper,
    parse_add_column_row_paper,
)
from tablereason.methods.chain_of_table.session import Session, timed_step
from tablereason.methods.chain_of_table.state import StepResult, keep, skip
from tablereason.methods.chain_of_table.steps import STEPS
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
    """Why a new column is rejected (the reference's acceptance rules), or ``None``.

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


def paper_add_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """The reference's way (``add_column_per_row``): 3 values from one call, then one per row."""
    if not session.settings.add_column_per_row:
        return _ask_chunked(session, table, None, paper=True)
    return _ask_per_row(session, table, paper=True)


def efficient_add_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """A new column the generated chain computes (``name = expression``), or names.

    With ``plan_arguments``, a chain whose call is ``f_add_column(name = expression)``
    (the form the efficient plan's demos show, and the only one its grammar allows)
    adds the column DuckDB computes for every row, with no model call; an expression
    that does not run, or a column the rules refuse, skips the step, again with no
    call. A chain that gives only a name asks for the values once per chunk of rows
    under that name (no re-ask); one that names add_column without a name, or with
    the name of a column the table has, skips the step at once. Without
    ``plan_arguments`` the model names the column and its values, with the bounded
    re-ask.
    """
    if session.settings.add_column_per_row:
        return _ask_per_row(session, table, paper=False)
    if given is None or not session.settings.plan_arguments:
        return _ask_chunked(session, table, None, paper=False)
    if "=" in given.text:
        return _computed(session, table, given)
    name = given.text.strip().strip("\"'`").strip()
    if not name or name.casefold() in {h.casefold() for h in table.columns}:
        step = timed_step(session.trace, "operation", "add_column", None)
        step.arguments["plan_arguments"] = given.text
        reason = (
            f"a column named {name!r} already exists"
            if name
            else "the generated chain names no column to add"
        )
        step.note = "no model call"
        return skip(step, "add_column", reason, table)
    return _ask_chunked(session, table, name, paper=False)


def _computed(session: Session, table: Table, given: ChainArgument) -> StepResult:
    """The column the chain's ``name = expression`` computes, with no model call."""
    step = timed_step(session.trace, "operation", "add_column", None)
    step.arguments.update(plan_arguments=given.text, from_chain=True)
    step.note = f"arguments from the generated chain ({given.text}); no model call"
    try:
        column, expression, added = computed_column(table, given.text)
    except ParseError as err:
        return skip(step, "add_column", str(err), table)
    step.arguments.update(name=column, expression=expression)
    reason = computed_column_rejection(added, column)
    if reason is not None:
        return skip(step, "add_column", reason, table)
    return keep(step, "add_column", f"f_add_column({column} = {expression})", table, after=added)


def _added(
    session: Session, step: TraceStep, table: Table, name: str, values: list[str], *, paper: bool
) -> StepResult:
    """The table with the new column, or a skip naming the rule it breaks."""
    rows = table.rows()
    columns = [[row[i] for row in rows] for i in range(len(table.columns))]
    reason = add_column_rejection(table.columns, columns, name, values, paper=paper)
    step.arguments.update(name=name, values=values)
    if reason is not None:
        return skip(step, "add_column", reason, table)
    try:
        added = table.add_column(name, values[: table.num_rows])
    except TableError as err:
        return skip(step, "add_column", str(err), table)
    return keep(step, "add_column", f"f_add_column({name})", table, after=added)


def _ask_per_row(session: Session, table: Table, *, paper: bool) -> StepResult:
    """The reference's way: name and 3 values from a first call, then one call per row."""
    name = session.prompt_name_in("paper", "add_column")
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
    way = STEPS.get("add_column").ways["paper"]  # the reference's calls, whatever the mode
    spec: ReplySpec[str] = session.spec(way, reasks=0)
    text = session.ask(step, prompt, spec).text
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
    row_spec: ReplySpec[str] = session.spec(way, reasks=0)
    for row in rows[3:]:
        row_prompt = render(
            session.prompt_name_in("paper", "add_column_row"),
            demo=demo,
            table=pipe_block(caption, header, [row]),
            prefix=prefix,
        )
        values.append(parse_add_column_row_paper(session.ask(step, row_prompt, row_spec).text))
    return _added(session, step, table, reply.name, values, paper=paper)


def _ask_chunked(session: Session, table: Table, known: str | None, *, paper: bool) -> StepResult:
    """Every row's value, ``add_column_chunk_rows`` rows per call (the name from the first).

    ``known``: the column's name, given by the generated chain; the calls then ask only
    for values.
    """
    name = session.prompt_name_in("efficient", "add_column")
    step = timed_step(session.trace, "operation", "add_column", name)
    if known is not None:
        step.arguments["from_chain"] = True
    header, rows = table.columns, table.rows()
    size = session.settings.add_column_chunk_rows
    way = STEPS.get("add_column").ways["efficient"]
    column = known
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
            text: str, numbers: list[int] = numbers, named: str | None = column
        ) -> AddColumnReply:
            return parse_add_column_rows(text, numbers, name=named)

        spec = session.spec(
            way, parse, rows=len(numbers), numbers=numbers, named=column is not None
        )
        reply = session.ask(step, prompt, spec).value
        if reply is None:
            return skip(step, "add_column", step.error or "unparsable reply", table)
        column = reply.name
        values.extend(reply.values)
    if column is None:
        return skip(step, "add_column", "the table has no rows", table)
    return _added(session, step, table, column, values, paper=paper)
