"""Text of the large-table view: the DuckDB summary of a table, as prompts show it.

:func:`view_text` writes the row count, the header, one line per column
(:func:`column_line`), close spellings of question words, the first rows and the rows
that mention the question (:func:`question_terms`), then the next rows up to the
budget; :func:`question_matches` finds the values of text columns the question names
(shown as ``question matches`` lines, and read by the SQL grammars);
:func:`group_block` is the group table with the number of groups;
:class:`LargeView` keeps one run's views and column profiles, so a table that did not
change is summarised once. The numbers come from
:mod:`tablereason.operations.table_profile`, which runs in DuckDB; only the lines
shown reach Python.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tablereason.methods.chain_of_table import views
from tablereason.methods.constraints.sql_literals import STOPWORDS as UNNAMING
from tablereason.operations import table_profile
from tablereason.operations.cell_retrieval import Retrieval, retrieve
from tablereason.operations.row_expressions import quoted

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

HEAD_ROWS = 3
"""First rows always shown."""
TOP_VALUES = 5
"""Columns with at most this many distinct values list them all, with counts."""
SHOWN_VALUES = 3
"""Frequent values listed for other columns."""
VALUE_CHARS = 40
"""Values in column lines are cut to this many characters."""
CELL_CHARS = 100
"""Cells of the rows shown are cut to this many characters."""
VIEW_COLUMNS = 40
"""Most columns a view describes and shows; a wider table names the rest on one line."""
HIDDEN_CHARS = 400
"""The line naming the columns not shown is cut to this many characters."""
CLOSED_VALUES = 50
"""A text column with at most this many distinct values is matched value by value (the
SQL grammars compare such a column only with its values, the same bound)."""
MATCHED_ROWS = 8
"""Rows of a many-valued column read to tell a whole-cell match from a part of a cell."""

_WORD = re.compile(r"[0-9a-z][0-9a-z'.-]*[0-9a-z]|[0-9a-z]", re.I)


def question_terms(question: str) -> list[str]:
    """Words of the question worth searching for, and adjacent pairs of them.

    Example:
        >>> question_terms("How many days had snow in Seattle?")
        ['days', 'snow', 'seattle', 'days snow', 'snow seattle']
    """
    words = [w.lower() for w in _WORD.findall(question)]
    kept = [w for w in words if w not in views.STOPWORDS]
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(kept)]
    return list(dict.fromkeys(kept + pairs))


@dataclass(frozen=True)
class Match:
    """A value of a text column that the question names.

    Attributes:
        column: The column's name.
        value: The value as the column spells it (``whole``), or the question's term
            that some of its cells contain.
        rows: Rows holding it, or ``None`` when not counted.
        whole: Whether whole cells equal ``value`` (else cells contain it).
    """

    column: str
    value: str
    rows: int | None = None
    whole: bool = True

    def line(self) -> str:
        """The view's line for the match.

        Example:
            >>> Match("status", "returned", 12).line()
            "question matches : status = 'returned' (12 rows)"
            >>> print(Match("Name", "municipal", 3, whole=False).line())
            question matches : contains(lower("Name"), 'municipal') (3 rows)
        """
        value = "'" + views.cell(self.value).replace("'", "''") + "'"
        name = quoted(self.column)
        test = f"{name} = {value}" if self.whole else f"contains(lower({name}), {value})"
        count = "" if self.rows is None else f" ({self.rows} rows)"
        return f"question matches : {test}{count}"


def question_matches(
    table: Table,
    question: str,
    summary: table_profile.TableProfile,
    found: Retrieval | None = None,
) -> tuple[Match, ...]:
    """The values of the table's text columns that the question names, found in DuckDB.

    A column with at most :data:`CLOSED_VALUES` distinct values matches its values
    equal (ignoring case) to a question term (:func:`question_terms`) or spelled like
    one (the retrieval's close matches). A column with more values matches the terms
    its cells hold: a whole cell equal to the term (among the first
    :data:`MATCHED_ROWS` rows found) gives the cell's spelling, else the term as a part
    of cells (:func:`_cell_matches`). Only terms that some row holds are searched column
    by column; words that name no value (``lowest``, ``total``, ``most``: the SQL
    literals' stop words) are never matched, not even by spelling (``lowest`` is
    spelled like ``west``).

    Args:
        table: The table.
        question: The question or statement.
        summary: The table's profile (its column types and distinct counts).
        found: The retrieval of the question's terms over ``table``, when made already.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["id", "status"], [["A1", "shipped"], ["A2", "returned"]])
        >>> summary = table_profile.profile(t)
        >>> [m.line() for m in question_matches(t, "how many were returned?", summary)]
        ["question matches : status = 'returned' (1 rows)"]
    """
    terms = question_terms(question)
    if not terms or not table.num_rows:
        return ()
    if found is None:
        found = retrieve(table, terms, limit=1, spell=_spellable, summary=summary)
    naming = {t for t in terms if not set(t.split()) <= UNNAMING}
    present = [t for t, n in found.matches.items() if n and t in naming]
    close = {(column, value): n for term, column, value, n in found.close if term in naming}
    out: list[Match] = []
    for column in summary.columns:
        if column.type != "text" or not column.filled:
            continue
        mine = [Match(column.name, v, n) for (c, v), n in close.items() if c == column.name]
        if column.distinct <= CLOSED_VALUES and present:
            counts, distinct, _ = table_profile.group_summary(
                table, column.name, limit=CLOSED_VALUES
            )
            if distinct <= CLOSED_VALUES:
                named = set(present)
                mine += [Match(column.name, v, n) for v, n in counts if v.casefold() in named]
        elif present:
            mine += _cell_matches(table, column.name, present)
        out += [m for m in mine if m.value.strip()]
    return tuple(dict.fromkeys(out))


def _cell_matches(table: Table, column: str, terms: Sequence[str]) -> list[Match]:
    """Terms found in a many-valued column: as whole cells, or as parts of cells.

    A part of a cell counts only for terms of at least three characters with a letter
    (a number inside codes such as ``A0002019`` is no value the question names).
    """
    inner = retrieve(table, terms, limit=MATCHED_ROWS, columns=[column])
    held = [t for t in terms if inner.matches.get(t)]
    if not held:
        return []
    cells = table.select_rows(inner.positions).select_columns([column]).rows()
    spelled = {c[0].casefold(): c[0] for c in cells}
    out = []
    for term in held:
        if term in spelled:
            out.append(Match(column, spelled[term], None))
        elif len(term) >= 3 and any(ch.isalpha() for ch in term):
            out.append(Match(column, term, inner.matches[term], whole=False))
    return out


def _spellable(term: str) -> bool:
    """Terms compared by spelling: single words of letters (not numbers, not pairs)."""
    return " " not in term and any(ch.isalpha() for ch in term) and len(term) >= 3


def _number(value: float) -> str:
    """A number as prompt text: whole numbers without ``.0``, others to 6 decimals.

    A sum can be infinite or not a number (a column holding ``inf`` or ``nan``, or
    numbers too large to add up); it is written as DuckDB writes such values.

    Example:
        >>> [_number(v) for v in (3.0, 0.1 + 0.2, float("inf"), float("-inf"), float("nan"))]
        ['3', '0.3', 'inf', '-inf', 'nan']
    """
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    rounded = round(value, 6)
    if rounded == int(rounded) and abs(rounded) < 1e15:
        return str(int(rounded))
    return repr(rounded)


def _round(count: int) -> int:
    """An estimated count to two significant digits."""
    return int(float(f"{count:.2g}"))


def _short(text: str, limit: int = VALUE_CHARS) -> str:
    text = views.cell(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def column_line(column: table_profile.ColumnProfile, shown: int = SHOWN_VALUES) -> str:
    """One line of the schema: name, type, missing cells, distinct values, range or values.

    Every value is listed when there are at most ``TOP_VALUES`` of them, else the
    ``shown`` most frequent; long values are cut.

    Example:
        >>> kind = table_profile.ColumnProfile("kind", "text", 9, 2, [("snow", 6), ("rain", 3)])
        >>> print(column_line(kind))
        column kind : text ; 2 distinct ; snow (6) , rain (3)
    """
    parts = [f"column {views.cell(column.name)} : {column.type}"]
    if column.missing:
        parts.append(f"{column.missing} null")
    if not column.filled:
        return " ; ".join(parts)
    about = "about " if column.approximate else ""
    parts.append(f"{about}{_round(column.distinct) if about else column.distinct} distinct")
    if column.low is not None:
        parts.append(f"from {_short(column.low)} to {_short(column.high or '')}")
    if column.total is not None:
        parts.append(f"sum {_number(column.total)}")
    top = column.top if column.distinct <= TOP_VALUES else column.top[:shown]
    if top and top[0][1] > 1:
        parts.append(" , ".join(f"{_short(v)} ({n})" for v, n in top))
    elif top and column.type == "text":
        parts.append("e.g. " + " , ".join(_short(v) for v, _ in top))
    return " ; ".join(parts)


def view_text(
    table: Table,
    question: str,
    *,
    caption: str | None,
    budget: int,
    head: int = HEAD_ROWS,
    cache: table_profile.ProfileCache | None = None,
    columns: int = VIEW_COLUMNS,
    matches: list[Match] | None = None,
) -> str:
    """The bounded view of a large table (without the ``/*`` ``*/`` wrapper).

    The view is bounded in both directions: at most ``budget`` lines, at most
    ``columns`` columns described and shown (those whose names share a word with the
    question first, then the others in table order; the rest are named on one line of
    at most :data:`HIDDEN_CHARS` characters), and each cell of a row cut to
    :data:`CELL_CHARS` characters.

    Args:
        table: The table to show.
        question: The question or statement; its words choose the rows shown.
        caption: Caption line to print, or ``None``.
        budget: Most lines for the schema and rows together (the profile's
            ``view_rows``); at least ``head`` rows are always shown.
        head: First rows always shown.
        cache: Column profiles of earlier views of the same run.
        columns: Most columns described and shown.
        matches: When given a list, the values the question names
            (:func:`question_matches`) are appended to it and shown, one
            ``question matches`` line each, after the column lines.

    Example:
        >>> from tablereason.table import Table
        >>> wide = Table.from_records([f"c{i}" for i in range(50)] + ["price"], [["1"] * 51])
        >>> view = view_text(wide, "what is the price?", caption=None, budget=60, columns=3)
        >>> view.splitlines()[1:3]
        ['col : c0 | c1 | price', 'more columns : 48 not shown : c2 | c3 | c4 | c5 | c6 | c7 | c8 | c9 | c10 | c11 | c12 | c13 | c14 | c15 | c16 | c17 | c18 | c19 | c20 | c21 | c22 | c23 | c24 | c25 | c26 | c27 | c28 | c29 | c30 | c31 | c32 | c33 | c34 | c35 | c36 | c37 | c38 | c39 | c40 | c41 | c42 | c43 | c44 | c45 | c46 | c47 | c48 | c49']
    """  # noqa: E501
    names = shown_columns(table.columns, question, columns)
    kept = set(names)
    hidden = [h for h in table.columns if h not in kept]
    if hidden:
        table = table.select_columns(names)
    summary = table_profile.profile(table, examples=TOP_VALUES, cache=cache)
    lines = [] if caption is None else [f"table caption : {views.cell(caption)}"]
    lines.append(f"rows : {table.num_rows}")
    lines.append("col : " + " | ".join(views.cell(h) for h in table.columns))
    if hidden:
        rest = _short(" | ".join(views.cell(h) for h in hidden), HIDDEN_CHARS)
        lines.append(f"more columns : {len(hidden)} not shown : {rest}")
    lines += [column_line(c) for c in summary.columns]
    room = max(budget - len(summary.columns), head)
    found: Retrieval | None = None
    if table.num_rows > room:
        terms = question_terms(question)
        found = retrieve(table, terms, limit=room - head, spell=_spellable, summary=summary)
    if matches is not None:
        matches += question_matches(table, question, summary, found)
        lines += [m.line() for m in matches]
    if found is None:
        positions = list(range(table.num_rows))
    else:
        for term, column, value, count in found.close:
            lines.append(
                f"close match : {term} ~ {views.cell(column)} = {views.cell(value)} ({count} rows)"
            )
        chosen = set(range(min(head, table.num_rows))) | set(found.positions)
        following = (i for i in range(table.num_rows) if i not in chosen)
        while len(chosen) < room:  # fill the budget with the next rows, as the small view does
            chosen.add(next(following))
        positions = sorted(chosen)
    if positions:
        rows = table.select_rows(positions).rows()
        for position, row in zip(positions, rows, strict=True):
            lines.append(f"row {position + 1} : " + " | ".join(_short(c, CELL_CHARS) for c in row))
    return "\n".join(lines)


def shown_columns(names: Sequence[str], question: str, limit: int = VIEW_COLUMNS) -> list[str]:
    """The columns a view shows, in table order: all of them, or ``limit`` chosen.

    A table of more than ``limit`` columns shows first those whose names share a word
    with the question, then the others in table order.

    Example:
        >>> shown_columns(["a", "b", "year", "c"], "which year?", 2)
        ['a', 'year']
    """
    if len(names) <= limit:
        return list(names)
    terms = {t for t in question_terms(question) if " " not in t}
    named = [n for n in names if terms & {w.lower() for w in _WORD.findall(n)}][:limit]
    chosen = set(named)
    for name in names:
        if len(chosen) >= limit:
            break
        chosen.add(name)
    return [n for n in names if n in chosen]


def group_block(column: str, groups: Sequence[tuple[str, int]], total: int | None) -> str:
    """The group block of the final query, saying how many groups there are in all.

    As :func:`~tablereason.methods.chain_of_table.views.group_block`, plus a line
    when only the largest groups are shown.

    Example:
        >>> print(group_block("k", [("a", 5)], total=3), end="")
        /*
        Group the rows according to column: k.
        Group ID | k | Count
        Group 1 | a | 5
        3 groups in all; the 1 largest are shown.
        */
    """
    block = views.group_block(column, groups)
    if total is None or total <= len(groups):
        return block
    note = f"{total} groups in all; the {len(groups)} largest are shown.\n"
    return block[: -len("*/\n")] + note + "*/\n"


@dataclass
class LargeView:
    """One large-table run's view cache: the view text of each table shown, column profiles.

    Attributes:
        views: The view text by table (keyed by ``id``; the table is kept to check it).
        profiles: Column profiles of earlier views, reused for columns that did not change.
        grammar_columns: The columns the SQL grammars of each table use (keyed and
            checked as ``views``).
        matches: The values the question names, per table viewed (keyed as ``views``).
    """

    views: dict[int, tuple[Table, str]] = field(default_factory=dict)
    matches: dict[int, tuple[Match, ...]] = field(default_factory=dict)
    profiles: table_profile.ProfileCache = field(default_factory=table_profile.ProfileCache)
    grammar_columns: dict[int, tuple[Table, tuple[Any, ...]]] = field(default_factory=dict)

    def block(self, table: Table, question: str, *, budget: int, caption: str | None = None) -> str:
        """The view of ``table`` wrapped in ``/*`` ... ``*/``, computed once per table.

        Args:
            table: The table to show.
            question: The question or statement; its words choose the rows shown.
            budget: Most lines for the schema and rows together (``view_rows``).
            caption: Caption line to print first, or ``None``.
        """
        key = id(table)
        cached = self.views.get(key)
        if cached is None or cached[0] is not table:
            found: list[Match] = []
            text = view_text(
                table, question, caption=None, budget=budget, cache=self.profiles, matches=found
            )
            cached = self.views[key] = (table, text)
            self.matches[key] = tuple(found)
        text = cached[1]
        if caption is not None:
            text = f"table caption : {views.cell(caption)}\n{text}"
        return "/*\n" + text + "\n*/\n"

    def matched(self, table: Table, question: str, *, budget: int) -> tuple[Match, ...]:
        """The values the question names in ``table`` (found with its view)."""
        self.block(table, question, budget=budget)
        return self.matches[id(table)]
