"""The reference's parsers for Chain-of-Table replies: its regular expressions and splits.

These reproduce the published code exactly (google-research/chain-of-table,
``utils/chain.py`` for the chain and ``operations/*.py`` for each step's reply; what
they do is described in docs/chain_of_table.md), quirks included, for the paper
profile's free-text replies; the rank-weight vote (:func:`rank_votes`) serves every
sampled selection. Each parser returns a typed value
or raises :class:`tablereason.errors.ParseError` with the raw text and what was
expected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tablereason.methods.chain_of_table.parse import (
    SORT_ORDERS,
    AddColumnReply,
    SortReply,
    fail,
)

_ADD_COLUMN = re.compile(r"f_add_column\(.*\)", re.S)
_ROW_LIST = re.compile(r"f_row\(\[(.*?)\]\)", re.S)
_COL_LIST = re.compile(r"f_col\(\[(.*?)\]\)", re.S)
_GROUP = re.compile(r"f_group\(([^\)]*)\)", re.S)
# DOTALL as in the reference: "." also matches a line break, so "Numerical\n" reads
# "Numerical" and the order and column captures run on across lines (greedily).
_SORT_TYPE = re.compile(r"The datatype is (\w*).", re.S)
_SORT_ORDER = re.compile(r'the order is "(.*)"\.', re.S)
_SORT_COLUMN = re.compile(r"f_sort\((.*)\)", re.S)


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
        raise fail("no f_add_column(...) in the reply", text, expected)
    if "We extract the value from" not in text or "The value:" not in text:
        raise fail("the reply lacks 'We extract the value from' or 'The value:'", text, expected)
    call = match.group(0)
    name = call[call.index("(") + 1 : call.index(")")].strip()
    values = tuple(v.strip() for v in text.split("The value:")[-1].strip().split("|"))
    if len(values) != 3:
        raise fail(f"expected exactly 3 values, got {len(values)}", text, expected)
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


def parse_group_paper(text: str, columns: Sequence[str]) -> str:
    """Reference group reply: the ``f_group(...)`` argument, which must be a column exactly.

    Example:
        >>> parse_group_paper("Therefore, the answer is: f_group(party).", ["party"])
        'party'
    """
    match = _GROUP.search(text)
    expected = "f_group(<column>) with an existing column"
    if match is None:
        raise fail("no f_group(...) in the reply", text, expected)
    column = match.group(1).strip()
    if column not in columns:
        raise fail(f"{column!r} is not a column", text, expected)
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
        raise fail("datatype, order or f_sort(...) is missing", text, expected)
    reply = SortReply(
        column=column.group(1).strip(),
        order=order.group(1).strip(),
        datatype=datatype.group(1).strip(),
    )
    if reply.order not in SORT_ORDERS:
        raise fail(f"unknown order {reply.order!r}", text, expected)
    if reply.column not in columns:
        raise fail(f"{reply.column!r} is not a column", text, expected)
    return reply


def parse_verdict_paper(text: str) -> str:
    """Reference TabFact answer: the stripped, lower-cased reply; true/false become yes/no.

    Anything but exactly ``yes``/``no`` counts as wrong downstream.

    Example:
        >>> parse_verdict_paper(" YES")
        'yes'
    """
    answer = text.strip().lower()
    return {"true": "yes", "false": "no"}.get(answer, answer)
