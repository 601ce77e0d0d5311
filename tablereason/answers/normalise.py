"""Normalising answer texts: surrounding marks, trailing punctuation, whole rows, sentences.

A model may answer ``13.`` for 13, quote its answer, copy a whole row
(``1985 | 1 104``) or write a sentence ("Chinstrap penguins live on Dream."). Each item
of an answer is normalised here against the final table's cells
(:class:`~tablereason.answers.cells.TableCells`):

* spaces are folded, and matching quotes or brackets around the whole item dropped;
* a trailing ``.``, ``,``, ``;``, ``:``, ``!`` or ``?`` is dropped, unless the item is a
  cell as written (``Jr.``) or has another dot (``U.S.``);
* a **whole row** (two or more cells of one row of the final table, joined by ``|``,
  ``;``, tabs or commas in one item, or given as the items of a list that covers the
  row: every column of a final table of up to three, three or more of a wider one) and
  a **sentence** (four words or more that end like one, or eight words or more) are
  reduced to the one cell of the final table they name that the question does not
  name, when there is exactly one; a sentence that answers a "how many" question with
  exactly one number is reduced to that number;
* a count followed by what the question counts (``15 years`` for "how many years")
  is reduced to the count.

The item keeps its shape (``value``, ``row`` or ``sentence``) for the warnings, and a
note for every change.

Example:
    >>> from tablereason.table import Table
    >>> from tablereason.answers.cells import TableCells
    >>> cells = TableCells(Table.from_records(["species", "island"], [["Chinstrap", "Dream"]]))
    >>> question = "where do chinstrap live?"
    >>> item = normalise_item("Chinstrap penguins live on Dream.", cells, question)
    >>> item.text, item.shape
    ('Dream', 'sentence')
    >>> normalise_item("13.", None, "how many?").text
    '13'
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from tablereason.answers.cells import TableCells, cell_key
from tablereason.answers.question import asks_count, mentions, words
from tablereason.answers.value import read_number

Shape = Literal["value", "row", "sentence"]

_PAIRS = {'"': '"', "'": "'", "“": "”", "‘": "’", "`": "`", "[": "]", "(": ")"}
_TRAILING = ".,;:!?"
_ROW_PREFIX = re.compile(r"^row\s+\d+\s*:\s*", re.I)
_PARTS = re.compile(r"\s*\|\s*|\s*;\s*|\t|,\s+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*$")
_NUMBER_TOKEN = re.compile(r"[-+]?\$?\d[\d,]*(?:\.\d+)?%?")
_COUNTED = re.compile(
    r"(?P<number>[-+]?\d[\d,]*(?:\.\d+)?)\s+(?P<unit>[^\W\d_]+(?:\s+[^\W\d_]+){0,2})"
)
MAX_PARTS = 40
"""Most parts of an item looked up as the cells of a row."""


@dataclass(frozen=True)
class Item:
    """One normalised answer item.

    Attributes:
        raw: The item as the method gave it.
        text: The normalised text.
        shape: ``value``; ``row`` when it was a whole row; ``sentence`` when a sentence.
        notes: What normalisation changed, one sentence each.
    """

    raw: str
    text: str
    shape: Shape = "value"
    notes: list[str] = field(default_factory=list)


def normalise_answer(raw: list[str], cells: TableCells | None, question: str) -> list[Item]:
    """Normalise every item of an answer; a list that is a whole row becomes one item.

    Example:
        >>> from tablereason.table import Table
        >>> cells = TableCells(Table.from_records(["year", "births"], [["1985", "1 104"]]))
        >>> question = "which year had 1 104 births?"
        >>> [(i.text, i.shape) for i in normalise_answer(["1985", "1 104"], cells, question)]
        [('1985', 'row')]
    """
    if cells is not None and len(raw) >= 2:
        notes: list[str] = []
        row = _row_item(" | ".join(raw), " | ".join(raw), cells, question, notes, whole=True)
        if row is not None:
            return [row]
    return [normalise_item(r, cells, question) for r in raw]


def normalise_item(raw: str, cells: TableCells | None, question: str) -> Item:
    """Normalise one answer item against the final table's cells (see module notes).

    Args:
        raw: The item as the method gave it.
        cells: The final table's cells, or ``None`` when the run had no table.
        question: The question, whose own values are never taken for the answer.
    """
    text = " ".join(str(raw).split())
    notes: list[str] = []
    counted = _counted(text, question)
    if counted is not None and not (cells is not None and cells.equal(text)):
        unit = text.rstrip(_TRAILING)[len(counted) :].strip()
        return Item(raw, counted, "value", [f"dropped {unit!r} after the count"])
    if not text or not _may_change(text) or (cells is not None and cells.equal(text)):
        return Item(raw, text)
    inner = _unwrapped(text)
    if inner != text:
        notes.append(f"dropped the marks around {text!r}")
        text = inner
    prefix = _ROW_PREFIX.match(text)
    if prefix is not None and cells is not None:
        text = text[prefix.end() :]
        notes.append("dropped the row number before the cells")
    if cells is not None:
        row = _row_item(raw, text, cells, question, notes)
        if row is not None:
            return row
    if _is_sentence(text) and not (cells is not None and cells.equal(text)):
        return _sentence_item(raw, text, cells, question, notes)
    return Item(raw, _strip_trailing(text, cells, notes), "value", notes)


def _counted(text: str, question: str) -> str | None:
    """The count in ``15 years`` when the question asks how many years, else ``None``.

    Up to three words may follow the number, each a word of the question (a plural
    ``s`` aside), so only what the question counts is dropped.

    Example:
        >>> _counted("15 years.", "how many years had a price above 50?")
        '15'
        >>> _counted("15 km", "how many years?"), _counted("15 years", "which year?")
        (None, None)
    """
    found = _COUNTED.fullmatch(text.rstrip(_TRAILING))
    if found is None or not asks_count(question):
        return None
    asked = {w.removesuffix("s") for w in words(question)}
    if all(w.removesuffix("s") in asked for w in words(found["unit"])):
        return found["number"]
    return None


def _may_change(text: str) -> bool:
    """Whether normalising could change ``text`` (else its cells need not be searched)."""
    return (
        text[-1] in _TRAILING
        or _PAIRS.get(text[0]) == text[-1]
        or _ROW_PREFIX.match(text) is not None
        or _PARTS.search(text) is not None
        or _is_sentence(text)
    )


def _unwrapped(text: str) -> str:
    while len(text) >= 2 and _PAIRS.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def _strip_trailing(text: str, cells: TableCells | None, notes: list[str]) -> str:
    stripped = text.rstrip(_TRAILING).rstrip()
    if not stripped or stripped == text:
        return text
    if cells is not None and cells.equal(text):
        return text
    if "." in stripped and read_number(stripped) is None:
        return text
    notes.append(f"dropped the trailing {text[len(stripped) :].strip()!r}")
    return stripped


def _is_sentence(text: str) -> bool:
    count = len(words(text))
    return count >= 8 or (count >= 4 and _SENTENCE_END.search(text) is not None)


def _row_item(
    raw: str, text: str, cells: TableCells, question: str, notes: list[str], whole: bool = False
) -> Item | None:
    """The item as a whole row, reduced when it can be; ``None`` when it is not a row.

    With ``whole`` (the items of a list) the parts must also cover the row (see module
    notes), since a list answer may rightly name two cells of one row.
    """
    parts = [p.strip() for p in (text.split(" | ") if whole else _PARTS.split(text)) if p.strip()]
    if not 2 <= len(parts) <= MAX_PARTS:
        return None
    hits: dict[int, dict[str, str]] = {}
    for part in parts:
        for column, rows in cells.equal(part).items():
            for row in rows.tolist():
                hits.setdefault(row, {}).setdefault(column, part)
    best = max(hits.values(), key=len, default={})
    width = len(cells.table.columns)
    if len(best) < 2 or (whole and len(best) < min(width, 3)):
        return None
    if whole and len(best) < len(parts):  # every item must be a cell of that row
        return None
    named = {cell_key(p): p for c, p in best.items() if not mentions(question, p)}
    if len(named) == 1:
        value = next(iter(named.values()))
        notes.append(
            f"reduced the whole row to {value!r}, the one cell it names that the question does not"
        )
        return Item(raw, value, "row", notes)
    notes.append("a whole row that names no single cell the question does not")
    return Item(raw, text, "row", notes)


def _sentence_item(
    raw: str, text: str, cells: TableCells | None, question: str, notes: list[str]
) -> Item:
    """The item as a sentence, reduced to the one cell (or count) it names when it can be."""
    named = [] if cells is None else cells.named_in(text)
    keys = Counter(cell_key(c) for c, _ in named if not mentions(question, c))
    longest = [k for k in keys if not any(k != o and mentions(o, k) for o in keys)]
    if len(longest) == 1:
        value = next(c for c, _ in named if cell_key(c) == longest[0])
        notes.append(
            f"reduced the sentence to {value!r}, the one cell it names that the question does not"
        )
        return Item(raw, value, "sentence", notes)
    numbers = _NUMBER_TOKEN.findall(text)
    if asks_count(question) and len(numbers) == 1:
        notes.append(f"reduced the sentence to its one number, {numbers[0]!r}")
        return Item(raw, numbers[0], "sentence", notes)
    notes.append("a sentence that names no single cell the question does not")
    return Item(raw, text, "sentence", notes)
