"""Chain-of-Table on large tables: a bounded view computed in DuckDB, operations over every row.

The efficient profile switches to this mode when the input table has more than
``settings.large_table_rows`` rows (1,000 by default; every WikiTQ and TabFact table
is smaller, so their runs are unchanged). In this mode:

* every prompt shows the view of
  :class:`~tablereason.methods.chain_of_table.large_view.LargeView` instead of the
  first rows: the row count, one line per column (type, distinct values, frequent
  values with counts, range and sum of numbers), cell values spelled like question
  words, the first rows and the rows that mention the question's words (ranked,
  capped) — all computed in DuckDB (:mod:`tablereason.operations.table_profile`), so
  the prompt stays the same size however many rows the table has and nothing
  proportional to it reaches Python;
* ``select_row`` (:func:`select_row`) takes a SQL condition
  (``f_select_row(where weather = 'snow')``) applied by the ``filter_rows`` operation
  over every row;
* ``add_column`` (:func:`add_column`) takes an expression
  (``f_add_column(year = year(date))``) that DuckDB evaluates for every row;
* ``group_column`` counts in DuckDB (:func:`group_counts`) and the final query sees
  the largest groups with the number of groups; after ``sort_column`` the first rows
  shown are the top rows.

Replies are parsed by :func:`condition_text` and :func:`column_expression`; the
operations check them (SQL guard, known columns) and a refused one gets the usual
bounded re-ask with the operation's message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from tablereason.errors import ParseError, SQLError, TableError
from tablereason.methods.chain_of_table.chain_arguments import ChainArgument
from tablereason.methods.chain_of_table.large_view import LargeView
from tablereason.methods.chain_of_table.session import Session, timed_step
from tablereason.methods.chain_of_table.state import Groups, StepResult, keep, skip
from tablereason.operations import table_profile
from tablereason.operations.row_expressions import parse_expression, referenced_columns
from tablereason.prompts.render import render

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import TraceStep

T = TypeVar("T")
GROUP_ROWS = 20
"""Groups the final query sees (the largest)."""
LOWERCASE_IN_DUCKDB_ROWS = 1000
"""Tables with more rows than this are lower-cased by DuckDB, not in Python."""

_WHERE = re.compile(r"^\s*where\b", re.I)
_ASSIGN = re.compile(r"(?<![<>!=])=(?!=)")


def view(session: Session) -> LargeView:
    """The session's large-table view cache.

    Raises:
        TableError: Outside the large-table mode.
    """
    if session.large is None:
        raise TableError("the large-table view was asked for outside the large-table mode")
    return session.large


# ----------------------------------------------------------------------------- replies


def condition_text(text: str) -> str:
    """The condition in a ``f_select_row(where ...)`` reply, or ``*`` for every row.

    A leading ``where`` is dropped; so are an unbalanced closing parenthesis (the end
    of the call) and anything after it.

    Raises:
        ParseError: When the reply holds no condition.

    Example:
        >>> condition_text(" where weather = 'snow') -> <END>")
        "weather = 'snow'"
        >>> condition_text("year(date) = 2012)")
        'year(date) = 2012'
    """
    body = _call_body(text.split("\n")[0])
    body = _WHERE.sub("", body).strip()
    if body in ("*", "all", "all rows"):
        return "*"
    if not body:
        raise ParseError(
            "no condition in the reply", raw=text, expected="where <SQL condition>), or *)"
        )
    return body


def column_expression(text: str) -> tuple[str, str]:
    """The name and expression of an ``f_add_column(name = expression)`` reply.

    Raises:
        ParseError: When there is no ``name = expression``.

    Example:
        >>> column_expression(' year = year("date")) -> f_group_column(year)')
        ('year', 'year("date")')
    """
    body = _call_body(text.split("\n")[0])
    expected = "<new column name> = <SQL expression over the columns>)"
    match = _ASSIGN.search(body)
    if match is None:
        raise ParseError("no 'name = expression' in the reply", raw=text, expected=expected)
    name = body[: match.start()].strip().strip("\"'`[]").strip()
    expression = body[match.end() :].strip()
    if not name or not expression:
        raise ParseError("the name or the expression is empty", raw=text, expected=expected)
    return name, expression


def _call_body(text: str) -> str:
    """The text up to the parenthesis that closes the call (quotes respected)."""
    depth = 0
    quote: str | None = None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return text[:i].strip()
            depth -= 1
    return text.strip()


def _refused(err: Exception, text: str, expected: str) -> ParseError:
    return ParseError(str(err), raw=text, expected=expected)


# ----------------------------------------------------------------------------- operations


def select_row(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Keep the rows where the model's condition holds (all rows for ``*``)."""
    name = session.step_prompt("select_row")
    step = timed_step(session.trace, "operation", "select_row", name)
    expected = "where <SQL condition over the columns>)"

    def apply(text: str) -> tuple[str, Table | None]:
        condition = condition_text(text)
        if condition == "*":
            return condition, None
        try:
            if not referenced_columns(parse_expression(condition)):
                raise SQLError(
                    f"the condition {condition!r} names no column, so it keeps all rows or "
                    "none; compare a column with a value, such as weather = 'snow'"
                )
            return condition, table.apply("filter_rows", condition=condition)
        except (SQLError, TableError) as err:
            raise _refused(err, text, expected) from None

    result = _argument(session, step, "select_row", table, given, apply)
    if result is None:
        return skip(step, "select_row", step.error or "no usable condition", table)
    condition, filtered = result
    if filtered is None:
        return keep(step, "select_row", "f_select_row(*)", table, rows=["*"])
    if not filtered.num_rows:
        step.note = (step.note + "; " if step.note else "") + "the condition matched no row"
    return keep(
        step,
        "select_row",
        f"f_select_row(where {condition})",
        table,
        after=filtered,
        condition=condition,
        rows_before=table.num_rows,
        rows_after=filtered.num_rows,
    )


def add_column(session: Session, table: Table, given: ChainArgument | None) -> StepResult:
    """Add a column computed by the model's expression, when the acceptance rules pass."""
    name = session.step_prompt("add_column")
    step = timed_step(session.trace, "operation", "add_column", name)

    def apply(text: str) -> tuple[str, str, Table]:
        return computed_column(table, text)

    result = _argument(session, step, "add_column", table, given, apply)
    if result is None:
        return skip(step, "add_column", step.error or "no usable expression", table)
    column, expression, added = result
    step.arguments.update(name=column, expression=expression)
    reason = computed_column_rejection(added, column)
    if reason is not None:
        return skip(step, "add_column", reason, table)
    return keep(step, "add_column", f"f_add_column({column} = {expression})", table, after=added)


def computed_column(table: Table, text: str) -> tuple[str, str, Table]:
    """The name, expression and new table of a ``name = expression`` reply over ``table``.

    Raises:
        ParseError: When there is no ``name = expression``, the name is taken, or the
            expression does not run over the table (the guard's or DuckDB's reason).
    """
    expected = "<name> = <SQL expression over the columns>)"
    column, expression = column_expression(text)
    if column.casefold() in {h.casefold() for h in table.columns}:
        raise ParseError(
            f"a column named {column!r} already exists; choose a new name",
            raw=text,
            expected=expected,
        )
    try:
        added = table.apply("add_column", name=column, expression=expression)
    except (SQLError, TableError) as err:
        raise _refused(err, text, expected) from None
    return column, expression, added


def _argument(
    session: Session,
    step: TraceStep,
    op: str,
    table: Table,
    given: ChainArgument | None,
    apply: Callable[[str], T],
) -> T | None:
    """The generated chain's argument applied, or else the model's reply to the step's prompt.

    When the chain named the step but gave it nothing usable, the step's prompt is
    asked once, without a re-ask. ``None`` when neither is usable (the step's error
    says why).
    """
    result = _from_chain(session, step, given, apply)
    if result is None:
        prompt = render(
            session.step_prompt(op),
            table=_block(session, table),
            label=session.label,
            question=session.question,
        )
        reasks = 0 if given is not None else None
        spec = session.spec(session.way(op), apply, reasks=reasks, table=table)
        result = session.ask(step, prompt, spec).value
    return result


def _block(session: Session, table: Table) -> str:
    return view(session).block(table, session.question, budget=session.settings.view_rows)


def computed_column_rejection(table: Table, column: str) -> str | None:
    """Why a computed column is refused (the add-column rules that make sense for one), or ``None``.

    Used by the large-table mode and by the efficient mode's ``name = expression``.
    """
    if column.startswith("number of"):
        return "the name starts with 'number of'"
    groups, distinct, _ = table_profile.group_summary(table, column, limit=1)
    if groups and distinct == 1 and not groups[0][0].strip():
        return "every new value is empty"
    if distinct == 1 and table.num_rows > 1:
        return "all new values are identical"
    return None


def _from_chain(
    session: Session, step: TraceStep, given: ChainArgument | None, apply: Callable[[str], T]
) -> T | None:
    """The generated chain's argument applied, when it is usable; else ``None``.

    Unlike the small-table steps' arguments, a refused one says why in the step's note.
    """
    if not session.settings.plan_arguments or given is None or not given.text:
        return None
    try:
        result = apply(given.text)
    except ParseError as err:
        step.arguments["plan_arguments"] = given.text
        step.note = f"the generated chain's argument ({given.text}) was refused: {err}"
        return None
    step.prompt_name = None
    step.arguments["from_chain"] = True
    step.note = f"arguments from the generated chain ({given.text}); no model call"
    return result


def group_counts(table: Table, column: str) -> tuple[Groups, float | None]:
    """The largest groups of ``column`` (with the number of groups) and its group ratio.

    Counted by DuckDB; only the :data:`GROUP_ROWS` largest groups reach Python.
    """
    counts, total, ratio = table_profile.group_summary(table, column, limit=GROUP_ROWS)
    return Groups(column, counts, total), ratio


def mode_note(table: Table, threshold: int | None) -> str:
    """What the input step says about the mode (``table`` is the input table)."""
    return (
        f"large-table mode: {table.num_rows} rows (more than "
        f"{threshold}); prompts show a summary computed in DuckDB, "
        "select_row takes a condition and add_column an expression, both run over every row"
    )
