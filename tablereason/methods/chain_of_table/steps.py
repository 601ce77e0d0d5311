"""Argument generation and acceptance rules for the five Chain-of-Table operations.

Each ``run_<op>(session)`` asks the model for the operation's arguments, parses them,
applies the reference's acceptance (skip / fall back) rules and, when accepted, the
matching :class:`~tablereason.table.Table` operation. It appends one
:class:`ChainEntry` and one trace step, and never raises on a bad reply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from tablereason.errors import ParseError, TableError
from tablereason.methods.chain_of_table import large as L
from tablereason.methods.chain_of_table import parse as P
from tablereason.methods.chain_of_table import views as V
from tablereason.methods.chain_of_table.session import ChainEntry, Session, finish, timed_step
from tablereason.operations.table_profile import same_order
from tablereason.prompts.render import render
from tablereason.registry import Registry
from tablereason.trace.record import TraceStep

T = TypeVar("T")


class GroupCrash(TableError):
    """The reference divides by zero on an all-empty group column and loses the example."""


def _keep(session: Session, step: TraceStep, op: str, text: str, **arguments: object) -> None:
    step.arguments.update(arguments)
    step.table = session.table
    session.chain.append(ChainEntry(op=op, kept=True, text=text))
    finish(step)


def _skip(session: Session, step: TraceStep, op: str, reason: str) -> None:
    step.error = step.error or reason
    step.note = f"skipped: {reason}" + (f"; {step.note}" if step.note else "")
    step.table = session.table
    session.chain.append(ChainEntry(op=op, kept=False, text=f"skip f_{op}()"))
    finish(step)


def _view_block(session: Session) -> str:
    """The current table as the efficient prompts show it (large tables: the summary)."""
    if session.large is not None:
        return L.view_block(session)
    numbers, rows = session.view()
    return V.pipe_block(None, session.header(), rows, numbers)


def _columns(session: Session) -> list[list[str]]:
    rows = session.table.rows()
    return [[row[i] for row in rows] for i in range(len(session.header()))]


def _from_plan(
    session: Session, step: TraceStep, op: str, parse: Callable[[str], T | None]
) -> T | None:
    """The operation's arguments as the generated chain gave them, when usable.

    Efficient profile with ``plan_arguments`` only. ``parse`` returns ``None`` (or
    raises :class:`ParseError`) when the text names nothing usable; the operation then
    asks the model as usual. A usable argument costs no model call.
    """
    if session.paper or not session.settings.plan_arguments:
        return None
    text = session.planned.pop(op, None)
    if text is None:
        return None
    try:
        value = parse(text)
    except ParseError:
        value = None
    if value is None:
        step.arguments["plan_arguments"] = text
        return None
    step.prompt_name = None
    step.arguments["from_chain"] = True
    step.note = f"arguments from the generated chain ({text}); no model call"
    return value


def _rejected_plan_text(step: TraceStep) -> str | None:
    """The chain's argument text that :func:`_from_plan` found unusable, if any."""
    text = step.arguments.get("plan_arguments")
    return None if text is None else str(text)


def _take_fallback(session: Session, step: TraceStep) -> bool:
    """Whether the step takes the reference's fallback instead of asking the model.

    True when the chain gave this step an unusable argument and
    ``ask_when_plan_unusable`` is off. The caller then applies the fallback for an
    unusable reply (all rows, all columns, skip) without a model call, so the step's
    prompt name is cleared here.
    """
    if _rejected_plan_text(step) is None or session.settings.ask_when_plan_unusable:
        return False
    step.prompt_name = None
    return True


# ----------------------------------------------------------------------------- add column


def add_column_rejection(
    header: Sequence[str],
    columns: Sequence[Sequence[str]],
    name: str,
    values: Sequence[str],
    *,
    paper: bool,
) -> str | None:
    """Why a new column is rejected (REFERENCE.md 1.6.1 rules 3-8), or ``None``.

    The efficient rules compare names and the substring test case-insensitively and
    accept identical values on a one-row table.

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


def run_add_column(session: Session) -> None:
    """Ask for a new column and add it when the acceptance rules pass."""
    if session.large is not None:
        L.run_add_column(session)
    elif session.settings.add_column_per_row:
        _add_column_paper(session)
    else:
        _add_column_chunked(session)


def _apply_add_column(session: Session, step: TraceStep, name: str, values: list[str]) -> None:
    reason = add_column_rejection(
        session.header(), _columns(session), name, values, paper=session.paper
    )
    step.arguments.update(name=name, values=values)
    if reason is not None:
        _skip(session, step, "add_column", reason)
        return
    try:
        session.table = session.table.add_column(name, values[: session.table.num_rows])
    except TableError as err:
        _skip(session, step, "add_column", str(err))
        return
    _keep(session, step, "add_column", f"f_add_column({name})")


def _add_column_paper(session: Session) -> None:
    name = session.prompt_name("add_column")
    step = timed_step(session.trace, "operation", "add_column", name)
    header, caption, rows = session.header(), session.table.caption, session.table.rows()
    first = V.pipe_block(caption, header, rows[:3])
    prompt = render(
        name,
        table=first,
        label=session.label,
        question=session.add_column_question,
        columns=", ".join(header),
    )
    text = session.ask(step, prompt, max_tokens=150)[0]
    try:
        reply = P.parse_add_column_paper(text)
    except ParseError as err:
        _skip(session, step, "add_column", f"unparsable reply: {err}")
        return
    if reply.name in header:
        _skip(session, step, "add_column", f"a column named {reply.name!r} already exists")
        return
    start = text.index("We extract the value from")
    prefix = text[start : text.index("The value:")] + "The value:"
    demo = first + "Explanation: " + text[start:]
    values = list(reply.values)
    for row in rows[3:]:
        row_prompt = render(
            session.prompt_name("add_column_row"),
            demo=demo,
            table=V.pipe_block(caption, header, [row]),
            prefix=prefix,
        )
        values.append(P.parse_add_column_row_paper(session.ask(step, row_prompt)[0]))
    _apply_add_column(session, step, reply.name, values)


def _add_column_chunked(session: Session) -> None:
    name = session.prompt_name("efficient_add_column")
    step = timed_step(session.trace, "operation", "add_column", name)
    header, rows = session.header(), session.table.rows()
    size = session.settings.add_column_chunk_rows
    column: str | None = None
    values: list[str] = []
    for start in range(0, len(rows), size):
        numbers = list(range(start + 1, min(start + size, len(rows)) + 1))
        prompt = render(
            name,
            table=V.pipe_block(None, header, rows[start : start + size], numbers),
            label=session.label,
            question=session.question,
            name="" if column is None else f" {column}\n",
        )

        def parse(
            text: str, numbers: list[int] = numbers, known: str | None = column
        ) -> P.AddColumnReply:
            return P.parse_add_column_rows(text, numbers, name=known)

        reply = session.ask_parsed(
            step, prompt, parse, max_tokens=16 + 12 * len(numbers), stop=("\n\n", "*/")
        )
        if reply is None:
            _skip(session, step, "add_column", step.error or "unparsable reply")
            return
        column = reply.name
        values.extend(reply.values)
    if column is None:
        _skip(session, step, "add_column", "the table has no rows")
        return
    _apply_add_column(session, step, column, values)


# ----------------------------------------------------------------------------- select


def _voted(
    session: Session, texts: Sequence[str], key: Callable[[str], tuple[str, ...] | None]
) -> set[str]:
    ranked = P.rank_votes([key(t) for t in texts])
    union: set[str] = set()
    for chosen in ranked[: session.settings.select_union]:
        union.update(chosen)
    return union


def _ask_selection(
    session: Session, step: TraceStep, prompt: str, parse: Callable[[str], tuple[str, ...] | None]
) -> set[str] | None:
    """Sampled (voting) or single-shot selection; ``None`` when nothing parsed."""
    settings = session.settings
    if settings.select_samples > 1 or session.paper:
        texts = session.ask(
            step,
            prompt,
            n=settings.select_samples,
            temperature=settings.select_temperature,
            max_tokens=150 if session.paper else 60,
            stop=() if session.paper else ("])", "\n"),
        )
        union = _voted(session, texts, parse)
        return union or None

    def strict(text: str) -> tuple[str, ...]:
        key = parse(text)
        if key is None:
            raise ParseError("no selection in the reply", raw=text, expected="a list of items")
        return key

    key = session.ask_parsed(step, prompt, strict, max_tokens=60, stop=("])", "\n"))
    return None if key is None else set(key)


def run_select_row(session: Session) -> None:
    """Keep the rows the model names; all rows when it names none (``f_select_row(*)``)."""
    if session.large is not None:
        L.run_select_row(session)
        return
    paper = session.paper
    name = session.prompt_name("select_row" if paper else "efficient_select_row")
    step = timed_step(session.trace, "operation", "select_row", name)
    table = session.table
    numbers, rows = session.view()
    label = session.label.lower() if paper else session.label
    prompt = render(
        name,
        table=V.pipe_block(
            table.caption if paper else None, table.columns, rows, numbers, stripped=paper
        ),
        label=label,
        question=session.question,
    )
    if paper:
        picked = _ask_selection(session, step, prompt, P.parse_row_key_paper)
    else:

        def key(text: str) -> tuple[str, ...] | None:
            try:
                rows_ = P.parse_rows(text, table.num_rows)
            except ParseError:
                return None
            return ("*",) if rows_ is None else tuple(str(i + 1) for i in rows_)

        planned = None
        if session.planned_rows == table.num_rows:
            planned = _from_plan(session, step, "select_row", key)
        if planned:
            picked = set(planned)
        elif _take_fallback(session, step):
            picked = None
            step.note = "the generated chain names no row; all rows kept, no model call"
        else:
            picked = _ask_selection(session, step, prompt, key)
    union = picked or set()
    indices = [j - 1 for j in range(1, table.num_rows + 1) if str(j) in union]
    if "*" in union or not indices:
        if picked is None and not step.note:
            step.note = "no selection parsed; all rows kept"
        _keep(session, step, "select_row", "f_select_row(*)", rows=["*"])
        return
    session.table = table.select_rows(indices)
    text = ", ".join(f"row {k}" for k in range(1, len(indices) + 1))
    _keep(session, step, "select_row", f"f_select_row({text})", rows=[i + 1 for i in indices])


def run_select_column(session: Session) -> None:
    """Keep the columns the model names; all columns when none matches."""
    paper = session.paper
    name = session.prompt_name("select_column" if paper else "efficient_select_column")
    step = timed_step(session.trace, "operation", "select_column", name)
    table = session.table
    header = table.columns
    if paper:
        _, rows = session.view()
        block = V.json_block(table.caption, header, rows)
        prompt = render(name, table=block, label=session.label.lower(), question=session.question)
        union = _ask_selection(session, step, prompt, P.parse_column_key_paper) or set()
        keep = [h for h in header if h.lower() in union]
    else:
        block = _view_block(session)
        prompt = render(name, table=block, label=session.label, question=session.question)

        def key(text: str) -> tuple[str, ...] | None:
            found = P.match_columns(P._list_body(text), header)
            return tuple(found) or None

        planned = _from_plan(session, step, "select_column", key)
        if planned:
            union = set(planned)
        elif _take_fallback(session, step):
            union = set()
            step.note = (
                "the generated chain names no column of the table; all columns kept, no model call"
            )
        else:
            union = _ask_selection(session, step, prompt, key) or set()
        keep = [h for h in header if h in union]
    if not keep:
        _keep(session, step, "select_column", "f_select_column(*)", columns=["*"])
        return
    session.table = table.select_columns(keep)
    _keep(session, step, "select_column", f"f_select_column({', '.join(keep)})", columns=keep)


# ----------------------------------------------------------------------------- group, sort


def _ask_argument(
    session: Session,
    step: TraceStep,
    op: str,
    name: str,
    *,
    paper_rows: int,
    paper_caption: bool,
    paper_parse: Callable[[str, list[str]], T],
    parse: Callable[[str, list[str]], T | None],
) -> T | None:
    """Ask for one operation's argument the profile's way; a failure skips the operation.

    Paper: the reference's first rows (with or without caption) and free text parsed
    by the reference's rules. Efficient: the bounded view and a one-line structured
    reply with one bounded repair.
    """
    table, header = session.table, session.header()
    if session.paper:
        caption = table.caption if paper_caption else None
        prompt = render(
            name,
            table=V.pipe_block(caption, header, table.rows(paper_rows), stripped=True),
            label=session.label,
            question=session.question,
            columns=", ".join(header),
        )
        text = session.ask(step, prompt, max_tokens=150)[0]
        try:
            return paper_parse(text, header)
        except ParseError as err:
            _skip(session, step, op, f"unparsable reply: {err}")
            return None
    planned = _from_plan(session, step, op, lambda t: parse(t, header))
    if planned is not None:
        return planned
    given = _rejected_plan_text(step)
    unknown = given is not None and P.leading_column(given, header) is None
    if unknown and _take_fallback(session, step):
        _skip(session, step, op, f"the generated chain's argument ({given}) names no column")
        return None
    prompt = render(
        name, table=_view_block(session), label=session.label, question=session.question
    )
    value = session.ask_parsed(
        step, prompt, lambda t: parse(t, header), max_tokens=24, stop=("\n",)
    )
    if value is None:
        _skip(session, step, op, step.error or "unparsable reply")
    return value


def run_group_column(session: Session) -> None:
    """Count the rows per value of a column; the table itself stays unchanged.

    Raises:
        GroupCrash: Paper profile only, when every cell of the column is empty (the
            reference loses the example there); the caller records it.
    """
    paper = session.paper
    name = session.prompt_name("group_column" if paper else "efficient_group_column")
    step = timed_step(session.trace, "operation", "group_column", name)
    table = session.table
    column = _ask_argument(
        session, step, "group_column", name,
        paper_rows=5, paper_caption=True, paper_parse=P.parse_group_paper, parse=P.parse_group,
    )  # fmt: skip
    if column is None:
        return
    values: list[str] = []
    largest: list[tuple[str, int]] = []
    if session.large is not None:  # counted in DuckDB; the largest groups only
        largest, ratio = L.group_summary(session, column)
    else:
        values = table.column_values(column)
        ratio = V.group_ratio(values)
    step.arguments.update(column=column, ratio=ratio)
    if ratio is None:
        if paper:
            step.error = f"column {column!r} has only empty cells (division by zero)"
            finish(step)
            raise GroupCrash(step.error)
        _skip(session, step, "group_column", f"column {column!r} has only empty cells")
        return
    if ratio > session.settings.group_threshold:
        _skip(
            session,
            step,
            "group_column",
            f"too many distinct values ({ratio:.2f} > {session.settings.group_threshold})",
        )
        return
    groups = largest if session.large is not None else V.count_groups(values)
    session.groups = (column, groups)
    _keep(
        session,
        step,
        "group_column",
        f"f_group_column({column})",
        groups=[[v, c] for v, c in groups],
    )


def run_sort_column(session: Session) -> None:
    """Sort the rows by a column when the rules allow it (paper: numerical only)."""
    paper = session.paper
    name = session.prompt_name("sort_column" if paper else "efficient_sort_column")
    step = timed_step(session.trace, "operation", "sort_column", name)
    table = session.table
    reply = _ask_argument(
        session, step, "sort_column", name,
        paper_rows=3, paper_caption=False, paper_parse=P.parse_sort_paper, parse=P.parse_sort,
    )  # fmt: skip
    if reply is None:
        return
    step.arguments.update(reply.model_dump())
    numerical = reply.datatype == "Numerical"
    if paper:
        values = table.column_values(reply.column)
        if numerical:
            keys: list[float] | list[str] = [
                n for n in (V.reference_number(v) for v in values) if n is not None
            ]
        else:
            keys = [v.strip() for v in values if v.strip()]
        if V.is_monotonic(keys):
            _skip(session, step, "sort_column", "the column is already sorted")
            return
        if session.settings.sort_numerical_only and not numerical:
            _skip(session, step, "sort_column", f"datatype {reply.datatype!r} is not Numerical")
            return
    try:
        sorted_table = table.sort_by(
            reply.column, descending=reply.descending, numeric=True if paper else None
        )
    except TableError as err:
        _skip(session, step, "sort_column", str(err))
        return
    if not paper and (
        same_order(sorted_table, table)
        if session.large is not None
        else sorted_table.rows() == table.rows()
    ):
        _skip(session, step, "sort_column", "the rows are already in that order")
        return
    session.table = sorted_table
    _keep(session, step, "sort_column", f"f_sort_column({reply.column})")


OPERATIONS: Registry[Callable[[Session], None]] = Registry("Chain-of-Table operation")
for _name, _runner in (
    ("add_column", run_add_column),
    ("select_row", run_select_row),
    ("select_column", run_select_column),
    ("group_column", run_group_column),
    ("sort_column", run_sort_column),
):
    OPERATIONS.register(_name, _runner)
