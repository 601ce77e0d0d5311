"""The group and sort steps: one column argument each, then the profile's checks.

Both ask for their argument the same way (:func:`_ask_argument`): the reference's
prompt with the first rows and a free-text reply, or the efficient prompt with the
bounded view and a one-line reply; the efficient profile first tries the generated
chain's argument. A group step leaves the table as it is and returns the groups the
final query shows; a sort step returns the sorted table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from tablereason.errors import ParseError, TableError
from tablereason.methods.chain_of_table import large
from tablereason.methods.chain_of_table.chain_arguments import (
    ChainArgument,
    from_chain,
    rejected_text,
    take_fallback,
)
from tablereason.methods.chain_of_table.parse import leading_column, parse_group, parse_sort
from tablereason.methods.chain_of_table.reference_parse import parse_group_paper, parse_sort_paper
from tablereason.methods.chain_of_table.session import Session, finish, timed_step
from tablereason.methods.chain_of_table.state import Groups, StepResult, keep, skip
from tablereason.methods.chain_of_table.views import (
    count_groups,
    group_ratio,
    is_monotonic,
    pipe_block,
    reference_number,
)
from tablereason.operations.table_profile import same_order
from tablereason.prompts.render import render

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import TraceStep

T = TypeVar("T")


class GroupCrash(TableError):
    """The reference divides by zero on an all-empty group column and loses the example."""


def _ask_argument(
    session: Session,
    step: TraceStep,
    name: str,
    table: Table,
    given: ChainArgument | None,
    *,
    reference_rows: int,
    reference_caption: bool,
    reference_parse: Callable[[str, list[str]], T],
    parse: Callable[[str, list[str]], T | None],
) -> tuple[T | None, str]:
    """One operation's argument, asked the profile's way, and why there is none.

    With the reference's prompts: its first ``reference_rows`` rows (with the caption
    when ``reference_caption``) and free text read by ``reference_parse``. Otherwise:
    the generated chain's argument when it names a column; the fallback (no call)
    when it names none and ``ask_when_plan_unusable`` is off; else the bounded view
    and a one-line structured reply with the bounded re-ask.

    Returns:
        The argument and ``""``, or ``None`` and the reason to skip the operation.
    """
    header = table.columns
    if session.rules.reference_prompts:
        caption = table.caption if reference_caption else None
        prompt = render(
            name,
            table=pipe_block(caption, header, table.rows(reference_rows), stripped=True),
            label=session.label,
            question=session.question,
            columns=", ".join(header),
        )
        text = session.ask(step, prompt, max_tokens=150)[0]
        try:
            return reference_parse(text, header), ""
        except ParseError as err:
            return None, f"unparsable reply: {err}"
    planned = from_chain(step, given, lambda t: parse(t, header))
    if planned is not None:
        return planned, ""
    unusable = rejected_text(step)
    unknown = unusable is not None and leading_column(unusable, header) is None
    if unknown and take_fallback(session, step):
        return None, f"the generated chain's argument ({unusable}) names no column"
    prompt = render(
        name, table=session.shown_block(table), label=session.label, question=session.question
    )
    value = session.ask_parsed(
        step, prompt, lambda t: parse(t, header), max_tokens=24, stop=("\n",)
    )
    if value is None:
        return None, step.error or "unparsable reply"
    return value, ""


def group_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Count the rows per value of a column; the table itself stays unchanged.

    Raises:
        GroupCrash: With the reference's rules only, when every cell of the column is
            empty (the reference loses the example there); the caller records it.
    """
    name = session.step_prompt("group_column")
    step = timed_step(session.trace, "operation", "group_column", name)
    column, reason = _ask_argument(
        session, step, name, table, given,
        reference_rows=5, reference_caption=True,
        reference_parse=parse_group_paper, parse=parse_group,
    )  # fmt: skip
    if column is None:
        return skip(step, "group_column", reason, table)
    if session.large is not None:  # counted in DuckDB; the largest groups only
        groups, ratio = large.group_counts(table, column)
    else:
        values = table.column_values(column)
        groups, ratio = Groups(column, count_groups(values)), group_ratio(values)
    step.arguments.update(column=column, ratio=ratio)
    if ratio is None:
        if session.rules.empty_group_crashes:
            step.error = f"column {column!r} has only empty cells (division by zero)"
            finish(step)
            raise GroupCrash(step.error)
        return skip(step, "group_column", f"column {column!r} has only empty cells", table)
    threshold = session.settings.group_threshold
    if ratio > threshold:
        reason = f"too many distinct values ({ratio:.2f} > {threshold})"
        return skip(step, "group_column", reason, table)
    return keep(
        step,
        "group_column",
        f"f_group_column({column})",
        table,
        grouped=groups,
        groups=[[v, c] for v, c in groups.counts],
    )


def sort_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Sort the rows by a column when the rules allow it.

    With ``rules.sort_checks_monotonic`` (the reference) a column already in order is
    skipped, and so is a column the model does not call Numerical when
    ``sort_numerical_only`` is set; otherwise a sort that leaves the rows as they were.
    """
    name = session.step_prompt("sort_column")
    step = timed_step(session.trace, "operation", "sort_column", name)
    reply, reason = _ask_argument(
        session, step, name, table, given,
        reference_rows=3, reference_caption=False,
        reference_parse=parse_sort_paper, parse=parse_sort,
    )  # fmt: skip
    if reply is None:
        return skip(step, "sort_column", reason, table)
    step.arguments.update(reply.model_dump())
    reference = session.rules.sort_checks_monotonic
    if reference:
        refusal = _reference_sort_refusal(session, table, reply.column, reply.datatype)
        if refusal is not None:
            return skip(step, "sort_column", refusal, table)
    try:
        sorted_table = table.sort_by(
            reply.column, descending=reply.descending, numeric=True if reference else None
        )
    except TableError as err:
        return skip(step, "sort_column", str(err), table)
    if not reference and (
        same_order(sorted_table, table)
        if session.large is not None
        else sorted_table.rows() == table.rows()
    ):
        return skip(step, "sort_column", "the rows are already in that order", table)
    return keep(step, "sort_column", f"f_sort_column({reply.column})", table, after=sorted_table)


def _reference_sort_refusal(
    session: Session, table: Table, column: str, datatype: str
) -> str | None:
    """Why the reference would not sort by ``column`` (already in order, not Numerical)."""
    values = table.column_values(column)
    numerical = datatype == "Numerical"
    if numerical:
        keys: list[float] | list[str] = [
            n for n in (reference_number(v) for v in values) if n is not None
        ]
    else:
        keys = [v.strip() for v in values if v.strip()]
    if is_monotonic(keys):
        return "the column is already sorted"
    if session.settings.sort_numerical_only and not numerical:
        return f"datatype {datatype!r} is not Numerical"
    return None
