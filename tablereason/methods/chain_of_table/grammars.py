r"""The constraints of Chain-of-Table's replies, built from the table and the chain so far.

Each builder takes the :class:`~.session.Session` and what the step knows, and returns
the :class:`~tablereason.llm.Grammar` its reply must match; the step table
(:data:`~.steps.STEP_TABLE`) and the modes name them. Only a decision is constrained:

- the plan: a chain that starts with an operation the graph allows now (or ``<END>``
  when it may end), continues only along the graph, skipped operations left out, and
  ends with ``<END>``; every call carries its arguments: row numbers the table has (or
  ``*``), column names of the table exactly, the two sort orders, a new column's name
  and the SQL expression over the table's columns that computes it; in the large-table
  mode also a condition in SQL (:mod:`tablereason.methods.constraints.sql`);
- each step's own reply: rows, columns, a group column, a sort column and order, one
  value per asked row, a condition, an expression;
- the final answer: ``YES``/``NO`` for TabFact, the ``a | b`` list for WikiTQ.

The paper mode's replies explain first; its grammars constrain only the slot after the
reference's marker (``f_row([``, ``f_col([``, ``f_group(``, ``f_sort(``), and are sent
only when the paper profile is asked to constrain.

Example:
    >>> from tablereason.llm.constraints import satisfies
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["player", "points"], [["ann", "12"], ["bo", "9"]])
    >>> g = chain_grammar(["select_row", "sort_column"], set(), t.columns, t.num_rows)
    >>> satisfies(g, ' f_select_row(row 2) -> f_sort_column(points, large to small) -> <END>')
    True
    >>> satisfies(g, ' f_select_row(row 3) -> <END>')
    False
    >>> satisfies(g, ' f_group_column(player) -> <END>')
    False
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tablereason.llm.constraints import Grammar
from tablereason.llm.constraints.gbnf import Ref, Repeat
from tablereason.methods.chain_of_table.parse import SORT_ORDERS, shown
from tablereason.methods.chain_of_table.steps import END, GRAPH
from tablereason.methods.constraints.parts import (
    Chars,
    Expr,
    Rules,
    alt,
    grammar,
    listed,
    numbers,
    one_of,
    optional,
    seq,
    text_of,
)
from tablereason.methods.constraints.sql import (
    CLOSED_VALUES,
    Column,
    Literals,
    condition_rules,
    expression_rules,
    grammar_type,
)
from tablereason.methods.constraints.sql_literals import question_literals, sql_number, years_of
from tablereason.operations import table_profile

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.methods.chain_of_table.large_view import Match
    from tablereason.methods.chain_of_table.session import Session
    from tablereason.methods.chain_of_table.state import ChainState
    from tablereason.table.value import Table

MOST_ROWS = 12
"""Most rows a selection lists (more: ``*``, every row)."""
MOST_COLUMNS = 6
"""Most columns a selection lists."""
NAME_CHARS = 24
"""Longest name of a new column."""
VALUE_CHARS = 16
"""Longest value of a new column's cell (a part of a cell: a year, a number, a name)."""
ANSWER_ITEMS = 10
"""Most items of a WikiTQ answer."""

_LETTER = Chars(((65, 90), (97, 122)))
_WORD = Chars(((48, 57), (65, 90), (97, 122), (95, 95)))
_NAME = seq(_LETTER, Repeat(_WORD, 0, 11), Repeat(seq(" ", Repeat(_WORD, 1, 12)), 0, 2))
"""A new column's name: up to three words of letters, digits and ``_``, a letter first."""
_END_LINE = optional("\n")


# ----------------------------------------------------------------------------- pieces


def _rows(count: int) -> Expr:
    """``*``, or ``row i`` items for rows that exist."""
    if count < 1:
        return Chars(((42, 42),))
    return alt("*", listed(seq("row ", numbers(1, count)), ", ", most=MOST_ROWS))


def _columns(columns: Sequence[str]) -> Expr:
    """A column of the table as the efficient prompts show it (on one line)."""
    return one_of(list(dict.fromkeys(shown(c) for c in columns)))


def _raw_columns(columns: Sequence[str]) -> Expr:
    """A column exactly as the table names it (the paper mode's replies have no stop)."""
    return one_of(list(columns))


def _order() -> Expr:
    return one_of(list(SORT_ORDERS))


def _calls(columns: Sequence[str], rows: int, *, column: Expr) -> dict[str, Expr]:
    """The call of each operation in a chain over a table with ``columns`` and ``rows``."""
    return {
        "add_column": seq("f_add_column(", _NAME, ")"),
        "select_row": seq("f_select_row(", _rows(rows), ")"),
        "select_column": seq("f_select_column(", listed(column, ", ", most=MOST_COLUMNS), ")"),
        "group_column": seq("f_group_column(", column, ")"),
        "sort_column": seq("f_sort_column(", column, ", ", _order(), ")"),
    }


def _reaching(target: str, skipped: set[str]) -> set[str]:
    """The operations from which the graph leads to ``target`` (itself included).

    Example:
        >>> sorted(_reaching("select_row", set()))
        ['add_column', 'select_row']
    """
    found = {target}
    changed = True
    while changed:
        changed = False
        for op, nexts in GRAPH.items():
            usable = op != "<init>" and op not in found and op not in skipped
            if usable and found & set(nexts):
                found.add(op)
                changed = True
    return found


def _chain(
    allowed: Sequence[str],
    skipped: set[str],
    calls: Mapping[str, Expr],
    rules: Rules,
    *,
    must: str | None = None,
) -> Rules:
    """Chain rules: ``allowed`` first, then along the graph to ``<END>``.

    Every call names only what the table has now: a column the chain's own add_column
    makes cannot be named by its later calls (a grammar cannot refer back to the name it
    was given); the step that follows keeps such a column (see ``ChainArgument.added``).
    With ``must``, the chain holds that operation: until it is placed, only operations
    that lead to it are offered and the chain cannot end (``must`` is ignored when no
    allowed operation leads to it).
    """
    reach = _reaching(must, skipped) if must is not None and must not in skipped else set()
    pending_first = bool(reach & set(allowed))

    def then(op: str, pending: bool) -> Ref:
        name = f"chain-{op.replace('_', '-')}"  # llama.cpp reads letters, digits and dashes
        name += "-before" if pending else ""
        if name not in rules:  # the graph is a DAG: no rule refers back to itself
            options: list[Expr | str] = []
            for nxt in GRAPH[op]:
                if nxt == END:
                    if not pending:
                        options.append(" -> <END>")
                elif nxt not in skipped and (not pending or nxt in reach):
                    options.append(seq(" -> ", calls[nxt], then(nxt, pending and nxt != must)))
            rules[name] = alt(*options)
        return Ref(name)

    first: list[Expr | str] = []
    for op in allowed:
        if op == END:
            if not pending_first:
                first.append("<END>")
        elif not pending_first or op in reach:
            first.append(seq(calls[op], then(op, pending_first and op != must)))
    rules["root"] = seq(optional(" "), alt(*first), _END_LINE)
    return rules


def chain_grammar(
    allowed: Sequence[str],
    skipped: set[str],
    columns: Sequence[str],
    rows: int,
    *,
    sql: Sequence[Column] | None = None,
    literals: Literals | None = None,
    expressions: Sequence[Column] | None = None,
    must: str | None = None,
) -> Grammar:
    """The grammar of a generated chain (see the module text).

    Args:
        allowed: The operations allowed now (``<END>`` included when it may end).
        skipped: Operations skipped so far (never offered again).
        columns: The table's column names.
        rows: The table's row count.
        sql: The large-table mode: the columns as SQL sees them; select_row then takes
            ``where`` a condition and add_column ``name = expression``.
        literals: What the SQL conditions and expressions may compare with, beyond the
            columns' own values (None: any literal of the column's type).
        expressions: The efficient mode: the columns as SQL sees them; add_column then
            takes ``name = expression`` (select_row keeps its row numbers).
        must: An operation the chain must hold (the large-table mode's ``select_row``
            when the question names a value the table holds), or None.

    Example:
        >>> from tablereason.llm.constraints import satisfies
        >>> g = chain_grammar(["add_column", "select_row", "group_column", "<END>"], set(),
        ...                   ["k"], 3, must="select_row")
        >>> satisfies(g, " f_group_column(k) -> <END>"), satisfies(g, " <END>")
        (False, False)
        >>> satisfies(g, " f_select_row(row 1) -> f_group_column(k) -> <END>")
        True
    """
    rules: Rules = {}
    calls = _calls(columns, rows, column=_columns(columns))
    over = sql if sql is not None else expressions
    if over is not None:
        rules.update(expression_rules(over, root="sql-expression", literals=literals))
        calls["add_column"] = seq("f_add_column(", _NAME, " = ", Ref("sql-expression"), ")")
    if sql is not None:
        calls["select_row"] = seq("f_select_row(", alt("*", seq("where ", Ref("cond"))), ")")
    return grammar(_chain(allowed, skipped, calls, rules, must=must))


def _skipped(state: ChainState) -> set[str]:
    return {e.op for e in state.chain if not e.kept}


# ----------------------------------------------------------------------------- the plan


def plan(session: Session, *, allowed: list[str], state: ChainState) -> Grammar:
    """The efficient plan: a chain over the current table's rows and columns.

    add_column carries ``name = expression`` (an expression over the table's columns),
    so the step it plans costs no model call.
    """
    table = state.table
    return chain_grammar(
        allowed,
        _skipped(state),
        table.columns,
        table.num_rows,
        literals=question_literals(session.question),
        expressions=sql_columns(session, table),
    )


def large_plan(session: Session, *, allowed: list[str], state: ChainState) -> Grammar:
    """The large-table plan: conditions and expressions in SQL over the table's columns.

    When the question names a value the table holds (:func:`names_a_value`) and the
    chain has no select_row yet, the chain must hold one: the question's filter.
    """
    table = state.table
    sql = sql_columns(session, table)
    filtered = any(e.op == "select_row" for e in state.chain)
    return chain_grammar(
        allowed,
        _skipped(state),
        table.columns,
        table.num_rows,
        sql=sql,
        literals=_literals(session, table),
        must="select_row" if not filtered and names_a_value(session, table) else None,
    )


def paper_plan(session: Session, *, allowed: list[str], state: ChainState) -> Grammar:
    """The reference's plan: allowed operations along the graph; arguments are free text."""
    free = seq("(", text_of("()\n", least=0, most=80), ")")
    calls = {op: seq(f"f_{op}", free) for op in GRAPH if op != "<init>"}
    return grammar(_chain(allowed, _skipped(state), calls, {}))


# ----------------------------------------------------------------------------- the steps


def rows(session: Session, *, table: Table) -> Grammar:
    """The efficient select-row reply, after ``f_row([``: rows of the table, or ``*``."""
    return grammar({"root": seq(_rows(table.num_rows), optional("])"))})


def columns(session: Session, *, table: Table) -> Grammar:
    """The efficient select-column reply, after ``f_col([``: columns of the table."""
    return grammar(
        {"root": seq(listed(_columns(table.columns), ", ", most=MOST_COLUMNS), optional("])"))}
    )


def group(session: Session, *, table: Table) -> Grammar:
    """The efficient group reply, after ``f_group(``: one column of the table."""
    return grammar({"root": seq(_columns(table.columns), optional(")"), _END_LINE)})


def sort(session: Session, *, table: Table) -> Grammar:
    """The efficient sort reply, after ``f_sort(``: a column and one of the two orders."""
    order = seq('), the order is "', _order(), '".')
    return grammar({"root": seq(_columns(table.columns), order, _END_LINE)})


def add_column_rows(session: Session, *, numbers: Sequence[int], named: bool) -> Grammar:
    """The efficient add-column reply: a name unless given, then ``row i : value`` per row."""
    first = Chars(((10, 10), (32, 32), (124, 124)), negated=True)
    value = seq(first, text_of("\n|", least=0, most=VALUE_CHARS - 1))
    lines = [seq(f"row {n} : ", value) for n in numbers]
    body: list[Expr | str] = []
    for i, line in enumerate(lines):
        body += [line] if i == 0 else ["\n", line]
    head: list[Expr | str] = [] if named else [" ", _NAME, "\n"]
    return grammar({"root": seq(*head, *body, Repeat(seq("\n"), 0, 2))})


def condition(session: Session, *, table: Table) -> Grammar:
    """The large select-row reply, after ``f_select_row(where``: a condition, or ``*``."""
    literals = _literals(session, table)
    rules = condition_rules(sql_columns(session, table), root="cond", literals=literals)
    rules["root"] = seq(" ", alt(Ref("cond"), "*"), optional(")"), _END_LINE)
    return grammar(rules)


def column_expression(session: Session, *, table: Table) -> Grammar:
    """The large add-column reply, after ``f_add_column(``: ``name = expression``."""
    literals = _literals(session, table)
    rules = expression_rules(sql_columns(session, table), root="sql-expression", literals=literals)
    rules["root"] = seq(_NAME, " = ", Ref("sql-expression"), optional(")"), _END_LINE)
    return grammar(rules)


def verdict(session: Session, *, task: str) -> Grammar:
    """The TabFact answer, after ``The answer is:``: ``YES`` or ``NO``."""
    return grammar({"root": seq(" ", one_of(["YES", "NO"]), _END_LINE)})


def answers(session: Session, *, task: str) -> Grammar:
    """The WikiTQ answer, after ``The answer is:``: short items separated by `` | ``."""
    item = seq(
        Chars(((32, 32), (124, 124), (10, 10)), negated=True), text_of("|\n", least=0, most=79)
    )
    return grammar({"root": seq(" ", listed(item, " | ", most=ANSWER_ITEMS), _END_LINE)})


def paper_rows(session: Session, *, table: Table) -> Grammar:
    """The reference's select-row reply: free text, then rows after ``f_row([``."""
    return grammar({"root": seq(_rows(table.num_rows), "])")}, after="f_row([")


def paper_columns(session: Session, *, table: Table) -> Grammar:
    """The reference's select-column reply: free text, then lower-case names after ``f_col([``.

    The reference matches only lower-case names, so those are what the slot offers.
    """
    names = _columns([c.lower() for c in table.columns])
    return grammar({"root": seq(listed(names, ", ", most=MOST_COLUMNS), "])")}, after="f_col([")


def paper_group(session: Session, *, table: Table) -> Grammar:
    """The reference's group reply: free text, then a column after ``f_group(``."""
    return grammar({"root": seq(_raw_columns(table.columns), ")", optional("."))}, after="f_group(")


def paper_sort(session: Session, *, table: Table) -> Grammar:
    """The reference's sort reply: free text (the datatype), then column and order."""
    tail = seq('), the order is "', _order(), '".')
    return grammar({"root": seq(_raw_columns(table.columns), tail)}, after="f_sort(")


def paper_verdict(session: Session, *, task: str) -> Grammar:
    """The reference's TabFact answer: ``yes`` or ``no``, as the reference reads it."""
    return grammar({"root": seq(optional(" "), one_of(["yes", "no", "YES", "NO"]))})


# ----------------------------------------------------------------------------- SQL columns


def sql_columns(session: Session, table: Table) -> list[Column]:
    """The table's columns for the SQL grammars: types, and the values each may compare with.

    Computed in DuckDB (the large view's column profiles and question matches, reused;
    one group query per text column with at most
    :data:`~tablereason.methods.constraints.sql.CLOSED_VALUES` distinct values) and kept
    for the run, per table. What each column compares with follows the question
    (docs/chain_of_table.md, "Constrained decisions"):

    - when the question names a value the table holds (:func:`names_a_value`), every
      literal is one the question names: a text column compares only with the values
      matched in it (the view's ``question matches``), numbers and dates only with the
      question's (see :func:`large_literals` for the rest of this rule);
    - else a few-valued text column compares with its values, a many-valued one with
      none, and numbers and dates with the question's (if any) and the view's values of
      the column (its smallest, largest and frequent values, the cells of the rows shown).

    ``IS NULL`` is offered only on columns with empty cells.
    """
    memo = session.large.grammar_columns if session.large is not None else {}
    cached = memo.get(id(table))
    if cached is not None and cached[0] is table:
        return list(cached[1])
    cache = session.large.profiles if session.large is not None else None
    summary = table_profile.profile(table, examples=3, cache=cache)
    cells = _shown_cells(session.shown_block(table), table.columns)
    matched = _matches(session, table)
    focused = names_a_value(session, table)
    asked = focused or bool(large_literals(session.question).numbers)
    out = []
    for profile, shown_cells in zip(summary.columns, cells, strict=True):
        values: tuple[str, ...] = ()
        kind = grammar_type(profile.type)
        seen = [profile.low or "", profile.high or "", *(v for v, _ in profile.top), *shown_cells]
        shown_values = tuple(dict.fromkeys(v for v in seen if v.strip()))
        if kind == "text":
            shown_values = ()
            if matched:
                mine = [m for m in matched if m.column == profile.name]
                values = tuple(dict.fromkeys(m.value for m in mine if m.whole))
                shown_values = tuple(
                    dict.fromkeys(s for m in mine if not m.whole for s in _spellings(m.value))
                )
            elif profile.distinct <= CLOSED_VALUES and not focused:
                counts, distinct, _ = table_profile.group_summary(
                    table, profile.name, limit=CLOSED_VALUES
                )
                if distinct <= CLOSED_VALUES:
                    values = tuple(v for v, _ in counts if v.strip())
        elif asked:
            shown_values = ()
        nullable = bool(profile.missing) or not profile.filled
        out.append(Column(profile.name, kind, values, shown=shown_values, nullable=nullable))
    memo[id(table)] = (table, tuple(out))
    return out


def large_literals(question: str, *, named: bool = False) -> Literals:
    """The question's numbers and dates for the large-table grammars, without its words.

    A text column compares with the values matched in it (:func:`sql_columns`), not
    with any word of the question. With ``named`` (the question names a value the table
    holds) every literal must be one the question names (``Literals.only_named``): date
    parts compare only with the question's numbers, day and month names only with those
    it says, no column with another, and ``<>``, ``NOT`` and ``NOT LIKE`` only when the
    question holds a negation.

    Example:
        >>> lits = large_literals("how many orders in 2019 came from the islands region?")
        >>> lits.words, lits.numbers
        ((), ('2019',))
    """
    return dataclasses.replace(question_literals(question), words=(), only_named=named)


def names_a_value(session: Session, table: Table) -> bool:
    """Whether the question names a value the table holds, so its chain needs a select_row.

    A value of a text column (the view's ``question matches``), or a number of the
    question in a number or date column's range (:func:`numbers_in_range`).
    """
    if _matches(session, table):
        return True
    cache = session.large.profiles if session.large is not None else None
    summary = table_profile.profile(table, examples=3, cache=cache)
    return numbers_in_range(large_literals(session.question).numbers, summary)


def numbers_in_range(numbers: Sequence[str], summary: table_profile.TableProfile) -> bool:
    """Whether a number lies within a number column's range or is a year of a date column's.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["units", "day"], [["3", "2019-05-01"], ["45", "2021-01-02"]])
        >>> summary = table_profile.profile(t)
        >>> numbers_in_range(["40"], summary), numbers_in_range(["2020"], summary)
        (True, True)
        >>> numbers_in_range(["2030"], summary), numbers_in_range([], summary)
        (False, False)
    """
    wanted = [float(n) for n in numbers]
    for profile in summary.columns if wanted else ():
        kind = grammar_type(profile.type)
        low, high = sql_number(profile.low or ""), sql_number(profile.high or "")
        if kind == "number" and low is not None and high is not None:
            if any(float(low) <= n <= float(high) for n in wanted):
                return True
        elif kind in ("date", "timestamp") and profile.low and profile.high:
            years = {float(y) for y in years_of([profile.low, profile.high])}
            if years & set(wanted):
                return True
    return False


def _literals(session: Session, table: Table) -> Literals:
    """The large-table literals of the session's question over ``table``."""
    return large_literals(session.question, named=names_a_value(session, table))


def _matches(session: Session, table: Table) -> tuple[Match, ...]:
    """The view's question matches of ``table`` (none outside the large-table mode)."""
    if session.large is None:
        return ()
    return session.large.matched(table, session.question, budget=session.settings.view_rows)


def _spellings(term: str) -> list[str]:
    """A question's term as text cells may spell it."""
    return list(dict.fromkeys([term, term.lower(), term.capitalize(), term.title()]))


def _shown_cells(view: str, columns: Sequence[str]) -> list[list[str]]:
    r"""Per column, the cells of the rows a view shows (``row i : a | b``).

    A row whose cells cannot be told apart (a cell holding `` | ``) is left out.

    Example:
        >>> _shown_cells("col : a | b\nrow 1 : x | 2\nrow 2 : y | z | 3", ["a", "b"])
        [['x'], ['2']]
    """
    out: list[list[str]] = [[] for _ in columns]
    for line in view.splitlines():
        head, colon, rest = line.partition(" : ")
        if not colon or not head.startswith("row ") or not head[4:].isdigit():
            continue
        cells = rest.split(" | ")
        if len(cells) == len(columns):
            for found, cell in zip(out, cells, strict=True):
                found.append(cell)
    return out
