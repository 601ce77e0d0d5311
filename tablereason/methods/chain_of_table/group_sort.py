"""The group and sort steps: one column argument each, then the way's checks.

Both ask for their argument one of two ways: the reference's prompt with the first rows
and a free-text reply (:func:`_paper_argument`), or the efficient prompt with the
bounded view and a one-line reply, after the generated chain's argument
(:func:`_efficient_argument`). A group step leaves the table as it is and returns the
groups the final query shows; a sort step returns the sorted table. The paper, efficient
and large ways differ in what they check and how they count, each a function below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from tablereason.calls import ReplySpec
from tablereason.errors import ParseError, TableError
from tablereason.methods.chain_of_table import large
from tablereason.methods.chain_of_table.chain_arguments import (
    ChainArgument,
    from_chain,
    reasks_for,
    rejected_text,
    take_fallback,
)
from tablereason.methods.chain_of_table.parse import (
    SortReply,
    leading_column,
    parse_group,
    parse_sort,
)
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


def _paper_argument(
    session: Session,
    step: TraceStep,
    op: str,
    table: Table,
    *,
    rows: int,
    caption: bool,
    parse: Callable[[str, list[str]], T],
) -> tuple[T | None, str]:
    """The reference's prompt (its first ``rows`` rows) and free text, read the reference's way."""
    header = table.columns
    prompt = render(
        session.step_prompt(op),
        table=pipe_block(
            table.caption if caption else None, header, table.rows(rows), stripped=True
        ),
        label=session.label,
        question=session.question,
        columns=", ".join(header),
    )
    spec: ReplySpec[str] = session.spec(session.way(op), reasks=0, table=table)
    text = session.ask(step, prompt, spec).text
    try:
        return parse(text, header), ""
    except ParseError as err:
        return None, f"unparsable reply: {err}"


def _efficient_argument(
    session: Session,
    step: TraceStep,
    op: str,
    table: Table,
    given: ChainArgument | None,
    parse: Callable[[str, list[str]], T],
) -> tuple[T | None, str]:
    """The chain's argument when it names a column; else the fallback, or one asked reply.

    The fallback (no call) is taken when the chain gave this step an argument that
    names no column and ``ask_when_plan_unusable`` is off. A chain that named the step
    without an argument, or with a known column but not the rest (a sort without its
    order), is asked once, with no re-ask.

    Returns:
        The argument and ``""``, or ``None`` and the reason to skip the operation.
    """
    header = table.columns
    planned = from_chain(step, given, lambda t: parse(t, header))
    if planned is not None:
        return planned, ""
    unusable = rejected_text(step)
    known = unusable is not None and leading_column(unusable, header) is not None
    if unusable is not None and not known and take_fallback(session, step):
        return None, f"the generated chain's argument ({unusable}) names no column"
    prompt = render(
        session.step_prompt(op),
        table=session.shown_block(table),
        label=session.label,
        question=session.question,
    )
    reasks = 0 if known else reasks_for(given)
    spec = session.spec(session.way(op), lambda t: parse(t, header), reasks=reasks, table=table)
    value = session.ask(step, prompt, spec).value
    if value is None:
        return None, step.error or "unparsable reply"
    return value, ""


# ----------------------------------------------------------------------------- group


def _grouped(
    session: Session,
    step: TraceStep,
    table: Table,
    column: str,
    groups: Groups,
    ratio: float | None,
    *,
    crash_on_empty: bool,
) -> StepResult:
    step.arguments.update(column=column, ratio=ratio)
    if ratio is None:
        if crash_on_empty:
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


def _small_groups(table: Table, column: str) -> tuple[Groups, float | None]:
    values = table.column_values(column)
    return Groups(column, count_groups(values)), group_ratio(values)


def paper_group_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Count the rows per value of a column, the reference's way.

    Raises:
        GroupCrash: When every cell of the column is empty (the reference loses the
            example there); the caller records it.
    """
    step = timed_step(
        session.trace, "operation", "group_column", session.step_prompt("group_column")
    )
    column, reason = _paper_argument(
        session, step, "group_column", table, rows=5, caption=True, parse=parse_group_paper
    )
    if column is None:
        return skip(step, "group_column", reason, table)
    groups, ratio = _small_groups(table, column)
    return _grouped(session, step, table, column, groups, ratio, crash_on_empty=True)


def efficient_group_column(
    session: Session, table: Table, given: ChainArgument | None
) -> StepResult:
    """Count the rows per value of a column; an all-empty column is skipped."""
    step = timed_step(
        session.trace, "operation", "group_column", session.step_prompt("group_column")
    )
    column, reason = _efficient_argument(session, step, "group_column", table, given, parse_group)
    if column is None:
        return skip(step, "group_column", reason, table)
    groups, ratio = _small_groups(table, column)
    return _grouped(session, step, table, column, groups, ratio, crash_on_empty=False)


def large_group_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Count the rows per value in DuckDB; the final query sees the largest groups."""
    step = timed_step(
        session.trace, "operation", "group_column", session.step_prompt("group_column")
    )
    column, reason = _efficient_argument(session, step, "group_column", table, given, parse_group)
    if column is None:
        return skip(step, "group_column", reason, table)
    groups, ratio = large.group_counts(table, column)
    return _grouped(session, step, table, column, groups, ratio, crash_on_empty=False)


# ----------------------------------------------------------------------------- sort


def paper_sort_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Sort as the reference does: skip a column already in order, or not Numerical.

    A column counts as in order when its values, read as the reference reads numbers,
    are; ``sort_numerical_only`` skips a column the model does not call Numerical.
    """
    step = timed_step(session.trace, "operation", "sort_column", session.step_prompt("sort_column"))
    reply, reason = _paper_argument(
        session, step, "sort_column", table, rows=3, caption=False, parse=parse_sort_paper
    )
    if reply is None:
        return skip(step, "sort_column", reason, table)
    step.arguments.update(reply.model_dump())
    refusal = _reference_sort_refusal(session, table, reply.column, reply.datatype)
    if refusal is not None:
        return skip(step, "sort_column", refusal, table)
    return _sorted(step, table, reply, numeric=True, unchanged=None)


def efficient_sort_column(
    session: Session, table: Table, given: ChainArgument | None
) -> StepResult:
    """Sort by any column (``Table.sort_by`` decides how); skip a sort that changes nothing."""
    return _efficient_sort(session, table, given, lambda a, b: a.rows() == b.rows())


def large_sort_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Sort every row in DuckDB; skip a sort that leaves the rows in their order."""
    return _efficient_sort(session, table, given, same_order)


def _efficient_sort(
    session: Session,
    table: Table,
    given: ChainArgument | None,
    unchanged: Callable[[Table, Table], bool],
) -> StepResult:
    step = timed_step(session.trace, "operation", "sort_column", session.step_prompt("sort_column"))
    reply, reason = _efficient_argument(session, step, "sort_column", table, given, parse_sort)
    if reply is None:
        return skip(step, "sort_column", reason, table)
    step.arguments.update(reply.model_dump())
    return _sorted(step, table, reply, numeric=None, unchanged=unchanged)


def _sorted(
    step: TraceStep,
    table: Table,
    reply: SortReply,
    *,
    numeric: bool | None,
    unchanged: Callable[[Table, Table], bool] | None,
) -> StepResult:
    try:
        sorted_table = table.sort_by(reply.column, descending=reply.descending, numeric=numeric)
    except TableError as err:
        return skip(step, "sort_column", str(err), table)
    if unchanged is not None and unchanged(sorted_table, table):
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
