"""Parsers for Chain-of-Table model replies, one per decision, into typed values.

Two families live here:

* ``paper`` parsers reproduce the reference code's regular expressions and
  splitting rules exactly (REFERENCE.md 1.5 step 8 and 1.6), quirks included;
* ``efficient`` parsers read the same formats more carefully (known column names
  are matched case-insensitively, row numbers are range-checked, commas inside
  column names survive).

Every parser either returns a typed value or raises
:class:`tablereason.errors.ParseError` carrying the raw text and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from tablereason.errors import ParseError

END = "<END>"
OPERATIONS = ("add_column", "select_row", "select_column", "group_column", "sort_column")
SORT_ORDERS = ("small to large", "large to small")

_PLAN_NAME = re.compile(r"f_(.*?)\(.*\)")
_PLAN_CALL = re.compile(r"f_(\w+)\((.*)\)")
_ADD_COLUMN = re.compile(r"f_add_column\(.*\)", re.S)
_ROW_LIST = re.compile(r"f_row\(\[(.*?)\]\)", re.S)
_COL_LIST = re.compile(r"f_col\(\[(.*?)\]\)", re.S)
_GROUP = re.compile(r"f_group\(([^\)]*)\)", re.S)
# DOTALL as in the reference: "." also matches a line break, so "Numerical\n" reads
# "Numerical" and the order and column captures run on across lines (greedily).
_SORT_TYPE = re.compile(r"The datatype is (\w*).", re.S)
_SORT_ORDER = re.compile(r'the order is "(.*)"\.', re.S)
_SORT_COLUMN = re.compile(r"f_sort\((.*)\)", re.S)
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


def _fail(message: str, raw: str, expected: str) -> ParseError:
    return ParseError(message, raw=raw, expected=expected)


# ----------------------------------------------------------------------------- planner


def parse_plan(text: str) -> list[str]:
    """Operation names of a generated chain, in order (reference parsing).

    The text is split on ``->``; a part equal to ``<END>`` is ``<END>``, any other
    part contributes the name inside its first ``f_<name>(...)``.

    Example:
        >>> parse_plan(" f_select_row(row 1) -> f_select_column(a) -> <END>")
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


def parse_plan_arguments(text: str) -> dict[str, str]:
    """The argument text each operation of a generated chain carries, by operation name.

    Only the first call of each name counts (a chain uses an operation at most once);
    calls with empty parentheses carry nothing.

    Example:
        >>> parse_plan_arguments("f_select_row(row 1, row 3) -> f_select_column(a, b) -> <END>")
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


def parse_add_column_paper(text: str) -> AddColumnReply:
    """Reference parsing of the first add-column reply: name and exactly 3 values.

    Example:
        >>> r = parse_add_column_paper('We extract the value from column "a" and ... '
        ...     'f_add_column(b). The value: 1 | 2 | 3')
        >>> (r.name, r.values)
        ('b', ('1', '2', '3'))
    """
    expected = "f_add_column(<name>). The value: v1 | v2 | v3"
    match = _ADD_COLUMN.search(text)
    if match is None:
        raise _fail("no f_add_column(...) in the reply", text, expected)
    if "We extract the value from" not in text or "The value:" not in text:
        raise _fail("the reply lacks 'We extract the value from' or 'The value:'", text, expected)
    call = match.group(0)
    name = call[call.index("(") + 1 : call.index(")")].strip()
    values = tuple(v.strip() for v in text.split("The value:")[-1].strip().split("|"))
    if len(values) != 3:
        raise _fail(f"expected exactly 3 values, got {len(values)}", text, expected)
    return AddColumnReply(name=name, values=values)


def parse_add_column_row_paper(text: str) -> str:
    """Reference parsing of a per-row add-column reply: text before the first ``|``.

    Example:
        >>> parse_add_column_row_paper(" 290 | extra")
        '290'
    """
    value = text.strip()
    if "|" in value:
        value = value.split("|")[0].strip()
    return value


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
            raise _fail("the reply does not start with a column name", text, expected)
    found: dict[int, str] = {}
    for line in lines:
        match = _ROW_LINE.match(line)
        if match:
            found.setdefault(int(match.group(1)), match.group(2).strip())
    missing = [i for i in row_numbers if i not in found]
    if missing:
        raise _fail(f"no value for row(s) {missing[:5]}", text, expected)
    return AddColumnReply(name=name, values=tuple(found[i] for i in row_numbers))


# ----------------------------------------------------------------------------- select


def _paper_items(body: str) -> list[str]:
    """The reference's list split: strip the whole body, split on ``", "``, strip each item.

    The body is stripped before it is split, so a trailing separator stays on the last
    item (``"a, b, "`` gives ``["a", "b,"]``), and that item then names nothing.
    """
    return [item.strip() for item in body.strip().split(", ")]


def parse_row_key_paper(text: str) -> tuple[str, ...] | None:
    """Reference key of a select-row reply: sorted last tokens of the ``f_row([...])`` items.

    Returns ``None`` when the reply has no ``f_row([...])``. A trailing ``", "`` keeps
    its comma on the last item, which then matches no row (as in the reference).

    Example:
        >>> parse_row_key_paper("The answer is : f_row([row 3, row 12])")
        ('12', '3')
        >>> parse_row_key_paper("f_row([row 9, row 11, ])")
        ('11,', '9')
    """
    match = _ROW_LIST.search(text)
    if match is None:
        return None
    return tuple(sorted(item.split(" ")[-1] for item in _paper_items(match.group(1))))


def parse_column_key_paper(text: str) -> tuple[str, ...] | None:
    """Reference key of a select-column reply: sorted stripped ``f_col([...])`` items.

    Example:
        >>> parse_column_key_paper("f_col([year, name])")
        ('name', 'year')
        >>> parse_column_key_paper("f_col([RESULT, game, ])")
        ('RESULT', 'game,')
    """
    match = _COL_LIST.search(text)
    if match is None:
        return None
    return tuple(sorted(_paper_items(match.group(1))))


def rank_votes(keys: Sequence[tuple[str, ...] | None]) -> list[tuple[str, ...]]:
    """Rank parsed keys by summed rank weight, as the reference does.

    Choice i of N (0-based) weighs ``(N - i) / N``; equal totals keep first-seen order.

    Example:
        >>> rank_votes([("1",), ("2",), ("2",), ("2",)])
        [('2',), ('1',)]
    """
    total = len(keys)
    scores: dict[tuple[str, ...], float] = {}
    for i, key in enumerate(keys):
        if key is not None:
            scores[key] = scores.get(key, 0.0) + (total - i) / total
    return [k for k, _ in sorted(scores.items(), key=lambda kv: kv[1], reverse=True)]


def _list_body(text: str) -> str:
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
    body = _list_body(text)
    if "*" in body:
        return None
    picked: set[int] = set()
    for item in body.split(","):
        match = _ROW_ITEM.match(item.strip())
        if match and 1 <= int(match.group(1)) <= num_rows:
            picked.add(int(match.group(1)) - 1)
    if not picked:
        raise _fail("no valid row number in the reply", text, expected)
    return sorted(picked)


def match_columns(text: str, columns: Sequence[str]) -> list[str]:
    """Known column names mentioned in a comma-separated list, in table order.

    Names are matched whole (so commas inside a name are fine), exactly first and
    then case-insensitively.

    Example:
        >>> match_columns("Year, competition", ["Year", "Competition", "Venue"])
        ['Year', 'Competition']
    """
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


def parse_columns(text: str, columns: Sequence[str]) -> list[str]:
    """Efficient select-column reply: known column names, in table order.

    Example:
        >>> parse_columns("Year, Competition])", ["Year", "Competition", "Venue"])
        ['Year', 'Competition']
    """
    picked = match_columns(_list_body(text), columns)
    if not picked:
        raise _fail(
            "no known column in the reply", text, "f_col([c1, c2]) with c in " + repr(columns)
        )
    return picked


# ----------------------------------------------------------------------------- group, sort


def parse_group_paper(text: str, columns: Sequence[str]) -> str:
    """Reference group reply: the ``f_group(...)`` argument, which must be a column exactly.

    Example:
        >>> parse_group_paper("Therefore, the answer is: f_group(party).", ["party"])
        'party'
    """
    match = _GROUP.search(text)
    expected = "f_group(<column>) with an existing column"
    if match is None:
        raise _fail("no f_group(...) in the reply", text, expected)
    column = match.group(1).strip()
    if column not in columns:
        raise _fail(f"{column!r} is not a column", text, expected)
    return column


def leading_column(text: str, columns: Sequence[str]) -> str | None:
    """The longest known column the text starts with, followed by ``)``, ``,`` or nothing."""
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
        raise _fail("no known column in the reply", text, "<column>) with c in " + repr(columns))
    return column


def parse_sort_paper(text: str, columns: Sequence[str]) -> SortReply:
    """Reference sort reply: datatype, order and column must all parse.

    The three patterns match across line breaks and each capture is stripped, as in
    the reference, so ``f_sort( total )`` names ``total``.

    Example:
        >>> parse_sort_paper('The datatype is Numerical. Therefore, the answer is: '
        ...     'f_sort(total), the order is "large to small".', ["total"]).descending
        True
    """
    expected = 'The datatype is T. ... f_sort(<column>), the order is "<order>".'
    datatype = _SORT_TYPE.search(text)
    order = _SORT_ORDER.search(text)
    column = _SORT_COLUMN.search(text)
    if datatype is None or order is None or column is None:
        raise _fail("datatype, order or f_sort(...) is missing", text, expected)
    reply = SortReply(
        column=column.group(1).strip(),
        order=order.group(1).strip(),
        datatype=datatype.group(1).strip(),
    )
    if reply.order not in SORT_ORDERS:
        raise _fail(f"unknown order {reply.order!r}", text, expected)
    if reply.column not in columns:
        raise _fail(f"{reply.column!r} is not a column", text, expected)
    return reply


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
        raise _fail("no known column or no order in the reply", text, expected)
    return SortReply(column=column, order=order.group(1).lower())


# ----------------------------------------------------------------------------- final answer


def parse_verdict_paper(text: str) -> str:
    """Reference TabFact answer: the stripped, lower-cased reply; true/false become yes/no.

    Anything but exactly ``yes``/``no`` counts as wrong downstream.

    Example:
        >>> parse_verdict_paper(" YES")
        'yes'
    """
    answer = text.strip().lower()
    return {"true": "yes", "false": "no"}.get(answer, answer)


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
        raise _fail("the reply does not start with yes or no", text, "YES or NO")
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
        raise _fail("the reply is empty", text, "a short answer, items separated by ' | '")
    return items
