r"""The literals SQL conditions may compare with: free forms, or those the question and view hold.

A free literal is any number, any quoted text, any existing ``'YYYY-MM-DD'`` date
(:func:`free_number`, :func:`free_text`, :func:`free_date`). A model given the free forms
copies its demos' literals (``contains(status, '1911')``) or invents them
(``quarter(order_date) = 199999999999``), and the condition keeps no row. So the
large-table conditions offer only literals drawn from what the prompt shows:
:class:`Literals` holds the question's words, numbers and dates
(:func:`question_literals`), and each column's values as the view shows them come with
the column. Every literal is written as SQL writes it: text quoted with its single quotes
doubled, numbers and dates checked against their form.

Example:
    >>> lits = question_literals("How many orders in 2019 came from the Islands region?")
    >>> lits.numbers, lits.dates[:2]
    (('2019',), ('2019-01-01', '2019-12-31'))
    >>> 'Islands' in lits.words and 'islands' in lits.words and 'islands region' in lits.words
    True
    >>> sql_text("it's")
    "'it''s'"
"""

from __future__ import annotations

import datetime
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tablereason.llm.constraints.gbnf import Chars, Expr, Repeat, one_of
from tablereason.methods.constraints.parts import alt, optional, seq, text_of

STRING_CHARS = 60
"""Longest quoted text literal."""
MOST_WORDS = 24
"""Most words (and word pairs) of a question offered as text literals."""
MOST_SHOWN = 40
"""Most values the view shows of one column offered as its literals."""
STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be by did do does for from had has have how in is it many much of "
        "on or than that the their there this to was were what when where which who whom whose "
        "why with most least more less highest lowest largest smallest number total",
    )
)
"""Question words that name no value."""

NEGATIONS = frozenset(
    ("not", "no", "never", "except", "excluding", "without", "other", "outside", "besides")
)
"""Words that make a question ask for rows a value does not hold."""

_DIGIT = Chars(((48, 57),))
_NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?!\w|[.-]\d)")
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"\b(1[0-9]{3}|2[0-9]{3})\b")
_WORD = re.compile(r"[^\W_](?:[\w'.&-]*[^\W_])?")


@dataclass(frozen=True)
class Literals:
    """The literals a question offers to the conditions of its table.

    Attributes:
        words: Text: the question's words and adjacent pairs, as written, lower-case and
            capitalised.
        numbers: The question's numbers, as SQL writes them.
        dates: The question's dates (``YYYY-MM-DD``), and the first and last day of each
            year it names.
        said: Every word of the question, lower-case (day and month names are offered
            from these when ``only_named``).
        negated: Whether the question holds a negation (``not``, ``except``, ...).
        only_named: Every literal must be one the question names: the columns' own
            values (the caller gives only those the question names), the question's
            numbers and dates, date parts equal to its numbers, day and month names it
            says; and no ``<>``, ``NOT`` or ``NOT LIKE`` unless ``negated``, no column
            compared with another.
    """

    words: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    dates: tuple[str, ...] = ()
    said: frozenset[str] = frozenset()
    negated: bool = False
    only_named: bool = False


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def _spellings(word: str) -> list[str]:
    return [word, word.lower(), word.capitalize(), word.title()]


def question_literals(question: str) -> Literals:
    """The words, numbers and dates of a question, as condition literals.

    Example:
        >>> lits = question_literals("units of more than 45 sold on 2020-03-01?")
        >>> lits.numbers, lits.dates
        (('45',), ('2020-03-01', '2020-01-01', '2020-12-31'))
    """
    text = question.replace(",", "")
    words = [w for w in _WORD.findall(question) if not w.replace(".", "").isdigit()]
    kept = [w for w in words if w.lower() not in STOPWORDS][:MOST_WORDS]
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(kept)][:MOST_WORDS]
    dates = [f"{y}-{m}-{d}" for y, m, d in _DATE.findall(text) if valid_date(f"{y}-{m}-{d}")]
    for year in _YEAR.findall(text):
        dates += [f"{year}-01-01", f"{year}-12-31"]
    numbers = [sql_number(n) for n in _NUMBER.findall(text)]
    said = frozenset(w.lower() for w in words)
    return Literals(
        words=_unique(s for w in kept + pairs for s in _spellings(w)),
        numbers=_unique(n for n in numbers if n is not None),
        dates=_unique(dates),
        said=said,
        negated=bool(said & NEGATIONS) or "n't" in question.lower(),
    )


def valid_date(text: str) -> bool:
    """Whether ``text`` is an existing ``YYYY-MM-DD`` date of years 1000 to 9999.

    Example:
        >>> valid_date("2019-02-28"), valid_date("2019-02-30"), valid_date("0999-01-01")
        (True, False, False)
    """
    if not re.fullmatch(r"[1-9]\d{3}-\d{2}-\d{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def sql_number(text: str) -> str | None:
    """A number as an SQL literal (at most 12 digits before the point, 6 after), or None.

    Example:
        >>> sql_number(" 1,250.50 "), sql_number("abc"), sql_number("1e400")
        ('1250.50', None, None)
    """
    cleaned = text.strip().replace(",", "")
    if not re.fullmatch(r"-?\d{1,12}(?:\.\d{1,6})?", cleaned):
        return None
    return cleaned


def sql_text(value: str) -> str:
    """A text value as a quoted SQL literal (single quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


def texts(values: Sequence[str], *, lower: bool = False) -> Expr | None:
    """One of ``values`` as quoted literals (lower-cased with ``lower``), or None if none."""
    spelled = _unique((v.lower() if lower else v) for v in values if _fits(v))
    return one_of([sql_text(v) for v in spelled]) if spelled else None


def patterns(values: Sequence[str], *, lower: bool = False) -> Expr | None:
    """A ``LIKE`` pattern of one of ``values``: the value, with ``%`` before and/or after."""
    spelled = _unique((v.lower() if lower else v) for v in values if _fits(v))
    if not spelled:
        return None
    inner = one_of([v.replace("'", "''") for v in spelled])
    return seq("'", optional("%"), inner, optional("%"), "'")


def _fits(value: str) -> bool:
    return bool(value.strip()) and len(value) <= STRING_CHARS and "\n" not in value


def numbers_of(values: Iterable[str]) -> Expr | None:
    """One of the numbers among ``values``, as SQL writes them, or None if none is one."""
    found = _unique(n for n in (sql_number(v) for v in values) if n is not None)
    return one_of(list(found)) if found else None


def dates_of(values: Iterable[str]) -> Expr | None:
    """One of the dates among ``values`` (a timestamp's date part), quoted, or None."""
    found = _unique(v.strip()[:10] for v in values if valid_date(v.strip()[:10]))
    return one_of([sql_text(d) for d in found]) if found else None


def years_of(values: Iterable[str]) -> list[str]:
    """Every year from the earliest to the latest date among ``values`` (at most 200)."""
    years = sorted({int(v.strip()[:4]) for v in values if valid_date(v.strip()[:10])})
    if not years:
        return []
    return [str(y) for y in range(years[0], min(years[-1], years[0] + 199) + 1)]


def free_number() -> Expr:
    """Any number: an optional minus, up to 12 digits, up to 6 decimals."""
    digits = Repeat(_DIGIT, 1, 12)
    return seq(optional("-"), digits, optional(seq(".", Repeat(_DIGIT, 1, 6))))


def free_text() -> Expr:
    """Any quoted text without quotes, backslashes or line breaks."""
    return seq("'", text_of("'\n\\", least=0, most=STRING_CHARS), "'")


def free_date() -> Expr:
    """A quoted ``YYYY-MM-DD`` date that exists (years 1000 to 9999; no 29 February)."""
    year = seq(Chars(((49, 57),)), Repeat(_DIGIT, 3, 3))
    days = [f"{d:02d}" for d in range(1, 29)]
    month_days = alt(
        seq("02-", one_of(days)),
        seq(
            one_of(["01", "03", "05", "07", "08", "10", "12"]),
            "-",
            one_of([*days, "29", "30", "31"]),
        ),
        seq(one_of(["04", "06", "09", "11"]), "-", one_of([*days, "29", "30"])),
    )
    return seq("'", year, "-", month_days, "'")
