"""Parsers for the efficient profile's Chain-of-Table replies, and for generated chains.

The efficient prompts end where a short structured reply starts, and these parsers
read it carefully: known column names are matched case-insensitively, row numbers
are range-checked, commas inside column names survive. The chain parsers
(:func:`parse_chain`, :func:`parse_chain_arguments`) and the WikiTQ answer parser
serve both profiles. The reference's own rules, quirks included, are in
:mod:`~tablereason.methods.chain_of_table.reference_parse`.

Every parser either returns a typed value or raises
:class:`tablereason.errors.ParseError` carrying the raw text and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from tablereason.errors import ParseError
from tablereason.methods.chain_of_table.steps import (  # the names the parsers read
    END,
    OPERATION_NAMES,  # noqa: F401 - read from here by the parser tests
)

SORT_ORDERS = ("small to large", "large to small")
"""The two orders a sort reply may name."""

_PLAN_NAME = re.compile(r"f_(.*?)\(.*\)")
_PLAN_CALL = re.compile(r"f_(\w+)\((.*)\)")
_ORDER_ANY = re.compile(r"(small to large|large to small)", re.I)
_ROW_LINE = re.compile(r"^\s*row\s+(\d+)\s*:(.*)$", re.I)
_ROW_ITEM = re.compile(r"^(?:row\s*)?(\d+)$", re.I)


class AddColumnReply(BaseModel):
    """A new column: its name and one value per row (as parsed)."""

    model_config = ConfigDict(frozen=True)

    name: str
    values: tuple[str, ...]


class SortReply(BaseModel):
    """A sort decision: column, order and (paper format only) datatype."""

    model_config = ConfigDict(frozen=True)

    column: str
    order: str
    datatype: str = ""

    @property
    def descending(self) -> bool:
        """Whether the order is "large to small"."""
        return self.order == "large to small"


def fail(message: str, raw: str, expected: str) -> ParseError:
    """The :class:`ParseError` a parser raises: the message, the raw reply, what was expected."""
    return ParseError(message, raw=raw, expected=expected)


# ----------------------------------------------------------------------------- planner


def parse_chain(text: str) -> list[str]:
    """Operation names of a generated chain, in order (reference parsing).

    The text is split on ``->``; a part equal to ``<END>`` is ``<END>``, any other
    part contributes the name inside its first ``f_<name>(...)``.

    Example:
        >>> parse_chain(" f_select_row(row 1) -> f_select_column(a) -> <END>")
        ['select_row', 'select_column', '<END>']
    """
    names: list[str] = []
    for part in text.split("->"):
        part = part.strip()
        if part == END:
            names.append(END)
            continue
        match = _PLAN_NAME.search(part)
        if match:
            names.append(match.group(1))
    return names


def parse_chain_arguments(text: str) -> dict[str, str]:
    """The argument text each operation of a generated chain carries, by operation name.

    Only the first call of each name counts (a chain uses an operation at most once);
    calls with empty parentheses carry nothing.

    Example:
        >>> parse_chain_arguments("f_select_row(row 1, row 3) -> f_select_column(a, b) -> <END>")
        {'select_row': 'row 1, row 3', 'select_column': 'a, b'}
    """
    found: dict[str, str] = {}
    for part in text.split("->"):
        match = _PLAN_CALL.search(part.strip())
        if match and match.group(1) not in found and match.group(2).strip():
            found[match.group(1)] = match.group(2).strip()
    return found


def first_allowed(names: Iterable[str], allowed: Sequence[str]) -> str | None:
    """The first name that is allowed, or ``None`` (the reference then ends the chain).

    Example:
        >>> first_allowed(["add_column", "select_row"], ["select_row", "<END>"])
        'select_row'
    """
    for name in names:
        if name in allowed:
            return name
    return None


# ----------------------------------------------------------------------------- add column


def parse_add_column_rows(
    text: str, row_numbers: Sequence[int], *, name: str | None = None
) -> AddColumnReply:
    r"""Efficient add-column reply: ``<name>`` then one ``row i : value`` line per row.

    Args:
        text: The reply, which continues a prompt ending in ``New column:``.
        row_numbers: The 1-based row labels the reply must cover, in order.
        name: The column name when the prompt already gave it (later chunks).

    Example:
        >>> parse_add_column_rows(" total\nrow 1 : 7\nrow 2 : 9", [1, 2]).values
        ('7', '9')
    """
    expected = "<name>, then 'row i : value' for rows " + ", ".join(map(str, row_numbers))
    lines = text.strip("\n").split("\n")
    if name is None:
        name = lines[0].strip() if lines else ""
        lines = lines[1:]
        if not name or _ROW_LINE.match(name):
            raise fail("the reply does not start with a column name", text, expected)
    found: dict[int, str] = {}
    for line in lines:
        match = _ROW_LINE.match(line)
        if match:
            found.setdefault(int(match.group(1)), match.group(2).strip())
    missing = [i for i in row_numbers if i not in found]
    if missing:
        raise fail(f"no value for row(s) {missing[:5]}", text, expected)
    return AddColumnReply(name=name, values=tuple(found[i] for i in row_numbers))


# ----------------------------------------------------------------------------- select


def list_body(text: str) -> str:
    """The inside of a ``[...]`` list whose opening bracket the prompt already wrote."""
    for marker in ("])", "]", "\n"):
        if marker in text:
            text = text.split(marker)[0]
    return text


def parse_rows(text: str, num_rows: int) -> list[int] | None:
    """Efficient select-row reply: 0-based row positions, or ``None`` for every row (``*``).

    Accepts ``row 3``, ``3`` and ``*`` items; row numbers outside 1..num_rows are ignored.

    Example:
        >>> parse_rows("row 2, row 9, 1])", 5)
        [0, 1]
    """
    expected = f"f_row([row i, row j]) with 1 <= i <= {num_rows}, or f_row([*])"
    body = list_body(text)
    if "*" in body:
        return None
    picked: set[int] = set()
    for item in body.split(","):
        match = _ROW_ITEM.match(item.strip())
        if match and 1 <= int(match.group(1)) <= num_rows:
            picked.add(int(match.group(1)) - 1)
    if not picked:
        raise fail("no valid row number in the reply", text, expected)
    return sorted(picked)


def split_names(text: str, names: Sequence[str], separator: str = ", ") -> list[str] | None:
    """``text`` read as known names joined by ``separator``, exactly; ``None`` when it is not.

    A constrained reply is written this way, so a name that holds the separator, or
    ends in a comma, is read back whole.

    Example:
        >>> split_names("Year, Place, Rank", ["Year", "Place, Rank", "Rank"])
        ['Year', 'Place, Rank']
        >>> split_names("Year, Venue", ["Year"]) is None
        True
    """
    ordered = sorted(set(names), key=len, reverse=True)
    found: dict[int, list[str]] = {0: []}
    for start in range(len(text) + 1):
        if start not in found:
            continue
        at = start + len(separator) if start else 0
        if start and not text.startswith(separator, start):
            continue
        for name in ordered:
            end = at + len(name)
            if name and text.startswith(name, at) and end not in found:
                found[end] = [*found[start], name]
    return found.get(len(text)) if text else None


def shown(name: str) -> str:
    r"""A column name as the efficient prompts show it: line breaks become spaces.

    A reply names a column the way its prompt showed it, on one line (a line break
    would end the reply at its stop string), so replies are read, and constrained,
    in this form.

    Example:
        >>> shown("Water level\ncm")
        'Water level cm'
    """
    return name.replace("\r", " ").replace("\n", " ")


def _shown_names(columns: Sequence[str]) -> dict[str, str] | None:
    """Each column's shown name to the column, or ``None`` when every name shows as it is."""
    names = [shown(c) for c in columns]
    return None if names == list(columns) else dict(zip(names, columns, strict=True))


def match_columns(text: str, columns: Sequence[str]) -> list[str]:
    r"""Known column names mentioned in a comma-separated list, in table order.

    Names are matched whole (so commas inside a name are fine): the list read exactly
    as names joined by ``", "`` when it is one, else item by item, exactly first and
    then case-insensitively; a name is read as it is shown (:func:`shown`).

    Example:
        >>> match_columns("Year, competition", ["Year", "Competition", "Venue"])
        ['Year', 'Competition']
        >>> match_columns("Water level cm", ["Date", "Water level\ncm"])
        ['Water level\ncm']
    """
    back = _shown_names(columns)
    if back is not None:
        return [back[c] for c in match_columns(text, list(back))]
    exact = split_names(text.strip(), columns)
    if exact:
        return [c for c in columns if c in exact]
    items = [i.strip().strip("'\"`") for i in text.split(",")]
    wanted = [i for i in items if i]
    found: set[str] = set()
    # Whole items first, then joined neighbours for names that contain commas.
    candidates = set(wanted)
    for size in range(2, 4):
        for start in range(len(items) - size + 1):
            candidates.add(", ".join(i for i in items[start : start + size]))
    lowered = {c.casefold(): c for c in columns}
    for cand in candidates:
        if cand in columns:
            found.add(cand)
        elif cand.casefold() in lowered:
            found.add(lowered[cand.casefold()])
    return [c for c in columns if c in found]


def column_list(text: str, columns: Sequence[str]) -> list[str]:
    """The known columns a select-column reply lists, in table order.

    The reply up to ``])`` (or the line's end) read exactly as names joined by ``", "``
    when it is one (so a name holding ``]`` or a comma is read whole), else item by
    item (:func:`match_columns`).

    Example:
        >>> column_list("Rank [a], Year])", ["Year", "Rank [a]"])
        ['Year', 'Rank [a]']
    """
    back = _shown_names(columns)
    if back is not None:
        return [back[c] for c in column_list(text, list(back))]
    body = text.split("])")[0].split("\n")[0].strip()
    exact = split_names(body, columns)
    if exact:
        return [c for c in columns if c in exact]
    return match_columns(list_body(text), columns)


def parse_columns(text: str, columns: Sequence[str]) -> list[str]:
    """Efficient select-column reply: known column names, in table order.

    Example:
        >>> parse_columns("Year, Competition])", ["Year", "Competition", "Venue"])
        ['Year', 'Competition']
    """
    picked = column_list(text, columns)
    if not picked:
        raise fail(
            "no known column in the reply", text, "f_col([c1, c2]) with c in " + repr(columns)
        )
    return picked


# ----------------------------------------------------------------------------- group, sort


def leading_column(text: str, columns: Sequence[str]) -> str | None:
    r"""The longest known column the text starts with, followed by ``)``, ``,`` or nothing.

    A name is read as it is shown (:func:`shown`).

    Example:
        >>> leading_column("water level cm), the order", ["Water level\ncm", "Date"])
        'Water level\ncm'
    """
    back = _shown_names(columns)
    if back is not None:
        found = leading_column(text, list(back))
        return None if found is None else back[found]
    head = text.strip()
    for column in sorted(columns, key=len, reverse=True):
        if column and head[: len(column)].casefold() == column.casefold():
            rest = head[len(column) :].lstrip()
            if not rest or rest[0] in "),":
                return column
    inner = head.split(")")[0].strip().strip("'\"`")
    if inner in columns:
        return inner
    lowered = {c.casefold(): c for c in columns}
    return lowered.get(inner.casefold())


def parse_group(text: str, columns: Sequence[str]) -> str:
    """Efficient group reply, continuing ``f_group(``: a known column.

    Example:
        >>> parse_group("electrical system)", ["Electrical system", "Brakes"])
        'Electrical system'
    """
    column = leading_column(text, columns)
    if column is None:
        raise fail("no known column in the reply", text, "<column>) with c in " + repr(columns))
    return column


def parse_sort(text: str, columns: Sequence[str]) -> SortReply:
    """Efficient sort reply, continuing ``f_sort(``: a known column and an order.

    Example:
        >>> parse_sort('Points), the order is "small to large".', ["Name", "Points"]).column
        'Points'
    """
    expected = '<column>), the order is "large to small" or "small to large".'
    column = leading_column(text, columns)
    order = _ORDER_ANY.search(text)
    if column is None or order is None:
        raise fail("no known column or no order in the reply", text, expected)
    return SortReply(column=column, order=order.group(1).lower())


# ----------------------------------------------------------------------------- final answer


def parse_verdict(text: str) -> str:
    """Efficient TabFact answer: ``yes`` or ``no`` from the first word of the reply.

    Example:
        >>> parse_verdict(" No, because the table says otherwise.")
        'no'
    """
    words = re.findall(r"[a-z]+", text.lower())
    first = words[0] if words else ""
    verdict = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}.get(first)
    if verdict is None:
        raise fail("the reply does not start with yes or no", text, "YES or NO")
    return verdict


def parse_short_answer(text: str) -> list[str]:
    r"""WikiTQ answer: the first line split on ``|``, items stripped, empties dropped.

    Example:
        >>> parse_short_answer(" Karen Andrew | Naomi Thomas\nmore")
        ['Karen Andrew', 'Naomi Thomas']
    """
    first = text.strip().split("\n")[0]
    items = [i.strip() for i in first.split("|")]
    items = [i for i in items if i]
    if not items:
        raise fail("the reply is empty", text, "a short answer, items separated by ' | '")
    return items
