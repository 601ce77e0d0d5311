"""The typed value of an answer: a number, date, boolean, text, or a list of them.

Every method answers in its own shape (a WikiTQ list of strings, a TabFact ``yes``,
a TabMWP number, a program's value, free text). :func:`scalar` reads one answer text
as a typed value; :func:`typed` reads a whole answer, with each item already
normalised (see :mod:`tablereason.answers.normalise`): one item is that item's value,
several make a list, none is ``none``. The same answer gives the same value whichever
method gave it.

Example:
    >>> typed(["13"]).model_dump()
    {'type': 'number', 'value': 13, 'text': '13', 'notes': []}
    >>> typed("yes").value, typed(["2012-01-05"]).type, typed(["a", "b"]).text
    (True, 'date', 'a | b')
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ValueType = Literal["number", "date", "boolean", "text", "list", "none"]
MAX_DIGITS = 1000
"""Longest run of digits read as a number; a longer one stays text."""

_BOOLEANS = {"yes": True, "true": True, "no": False, "false": False}
_NUMBER = re.compile(
    r"(?P<sign>[-+−]?)\s*(?P<currency>[$€£¥]?)\s*(?P<digits>\d{1,3}(?:[, ]\d{3})+|\d+)"
    r"(?P<fraction>\.\d+)?\s*(?P<percent>%?)"
)
_FRACTION = re.compile(r"(?P<sign>[-+]?)(?P<top>\d+)\s*/\s*(?P<bottom>\d+)")
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATES = (
    re.compile(r"(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})"),
    re.compile(
        rf"(?P<month>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})", re.I
    ),
    re.compile(
        rf"(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<month>{_MONTH})\.?,?\s+(?P<y>\d{{4}})", re.I
    ),
)


class AnswerValue(BaseModel):
    """An answer, typed and normalised.

    Attributes:
        type: ``number``, ``date``, ``boolean``, ``text``, ``list`` or ``none``.
        value: The number (int when whole and written without a fraction), the date
            (ISO text, ``2012-01-05``), the boolean, the text, the list of item values
            (each an :class:`AnswerValue`), or ``None``.
        text: The normalised text (a list's items joined with `` | ``).
        notes: What normalisation changed, one sentence each (empty when nothing).
    """

    model_config = ConfigDict(frozen=True)

    type: ValueType
    value: Any = None
    text: str = ""
    notes: list[str] = Field(default_factory=list)


def scalar(text: str) -> AnswerValue:
    """One answer text as a typed value (no normalisation beyond surrounding spaces).

    Example:
        >>> [scalar(t).value for t in ["1,104", "-3.5", "12%", "3/4", "no", "May 5, 1990"]]
        [1104, -3.5, 12, 0.75, False, '1990-05-05']
        >>> scalar("Dream").type, scalar("").type
        ('text', 'none')
    """
    item = " ".join(str(text).split())
    if not item:
        return AnswerValue(type="none", value=None, text="")
    folded = item.casefold()
    if folded in _BOOLEANS:
        return AnswerValue(type="boolean", value=_BOOLEANS[folded], text=item)
    number = read_number(item)
    if number is not None:
        return AnswerValue(type="number", value=number, text=item)
    date = read_date(item)
    if date is not None:
        return AnswerValue(type="date", value=date, text=item)
    return AnswerValue(type="text", value=item, text=item)


def typed(items: str | list[str], notes: list[str] | None = None) -> AnswerValue:
    """A whole answer (one text or a list of item texts) as one typed value.

    Example:
        >>> typed([]).type, typed(["x"]).type, typed(["1", "x"]).type
        ('none', 'text', 'list')
    """
    texts = [items] if isinstance(items, str) else [str(i) for i in items]
    values = [scalar(t) for t in texts]
    values = [v for v in values if v.type != "none"]
    if not values:
        return AnswerValue(type="none", value=None, text="", notes=list(notes or []))
    if len(values) == 1:
        return values[0].model_copy(update={"notes": list(notes or [])})
    return AnswerValue(
        type="list",
        value=values,
        text=" | ".join(v.text for v in values),
        notes=list(notes or []),
    )


def read_number(text: str) -> int | float | None:
    """The number ``text`` is, written whole: thousands separators, a sign, ``$``, ``%``.

    Example:
        >>> read_number("$1,200.50"), read_number("1 104"), read_number("12 km")
        (1200.5, 1104, None)
    """
    found = _NUMBER.fullmatch(text.strip())
    if found is not None:
        digits = re.sub(r"[, ]", "", found["digits"])
        if len(digits) > MAX_DIGITS:
            return None
        negative = found["sign"] in ("-", "−")
        if found["fraction"]:
            value: int | float = float(digits + found["fraction"])
        else:
            value = int(digits)
        return -value if negative else value
    fraction = _FRACTION.fullmatch(text.strip())
    if fraction is not None and len(text) <= MAX_DIGITS and int(fraction["bottom"]):
        value = int(fraction["top"]) / int(fraction["bottom"])
        return -value if fraction["sign"] == "-" else value
    return None


def read_date(text: str) -> str | None:
    """The date ``text`` is, as ISO text: ``2012-01-05``, ``2012/1/5``, ``May 5, 1990``...

    Example:
        >>> read_date("5 January 2012"), read_date("2012-13-01"), read_date("1990")
        ('2012-01-05', None, None)
    """
    for pattern in _DATES:
        found = pattern.fullmatch(text.strip())
        if found is None:
            continue
        parts = found.groupdict()
        month = _MONTHS[parts["month"].casefold()] if parts.get("month") else int(parts["m"])
        try:
            return dt.date(int(parts["y"]), month, int(parts["d"])).isoformat()
        except ValueError:
            return None
    return None
