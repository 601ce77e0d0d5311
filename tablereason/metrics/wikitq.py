"""WikiTableQuestions denotation accuracy, equal to the official ``evaluator.py`` (v1.0.2).

The official script is Python 2 and reads its files as bytes. This module
reproduces its behaviour on Python 3, quirks included:

* string normalisation: NFKD with combining marks dropped, quote and dash folding,
  trailing citations and parenthesised notes removed repeatedly, outer double quotes
  removed, one final ``.`` dropped, whitespace collapsed, lower-cased;
* numbers parse only from ASCII text (the bytes the Python 2 script saw): ``"1,000"`` and
  ``"1_000"`` stay strings, full-width digits are not numbers;
* near-integers are truncated, not rounded (``2.9999999`` becomes ``2``);
* targets use the CoreNLP canonical value (``targetCanon``) when the tagged file gives one,
  and a year-only date becomes a number;
* both sides are de-duplicated sets; the sizes must match and every target needs some
  matching prediction (not a bijection).

Known, documented differences: Unicode tables are Python 3's, not Python 2.7's (only
characters added to Unicode after 5.2 can differ). The official script divides by the
number of prediction lines; :func:`evaluate_prediction_file` reproduces that, while the
library's metric divides by the number of examples asked for.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from tablereason.datasets.wikitq import tsv_unescape_list

_QUOTES_SINGLE = re.compile(r"[‘’´`]")
_QUOTES_DOUBLE = re.compile(r"[“”]")
_DASHES = re.compile(r"[‐‑‒–—−]")
_CITATIONS = re.compile(r"((?<!^)\[[^\]]*\]|\[[0-9]+\]|[•♦†‡*#+])*$")
_PARENTHESES = re.compile(r"(?<!^)( \([^)]*\))*$")
_OUTER_QUOTES = re.compile(r'^"([^"]*)"$')
_SPACES = re.compile(r"\s+")
# Python 2's int()/float() on byte strings accept ASCII only, no "_" separators, and
# strip only the six ASCII whitespace characters (Python 3 also strips \x1c-\x1f).
_NOT_PY2_NUMERIC = re.compile(r"[^\x00-\x7f]|[_\x1c-\x1f]")


def normalize(text: str) -> str:
    """Normalise a string exactly as the official evaluator does.

    Example:
        >>> normalize("Café [1]"), normalize("Smith (footballer)"), normalize("U.S.")
        ('cafe', 'smith', 'u.s')
    """
    text = "".join(
        c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn"
    )
    text = _QUOTES_SINGLE.sub("'", text)
    text = _QUOTES_DOUBLE.sub('"', text)
    text = _DASHES.sub("-", text)
    while True:
        previous = text
        text = _CITATIONS.sub("", text.strip())
        text = _PARENTHESES.sub("", text.strip())
        text = _OUTER_QUOTES.sub(r"\1", text.strip())
        if text == previous:
            break
    if text and text[-1] == ".":
        text = text[:-1]
    return _SPACES.sub(" ", text).lower().strip()


def _py2_float_str(amount: float) -> str:
    """``unicode(float)`` in Python 2.7: 12 significant digits."""
    text = f"{amount:.12g}"
    return text if ("." in text or "e" in text or "n" in text) else text + ".0"


class Value:
    """A target or predicted denotation value (string, number or date)."""

    normalized: str

    def match(self, other: Value) -> bool:
        """Whether ``other`` (a prediction) matches this value (a target)."""
        return self.normalized == other.normalized


class StringValue(Value):
    """A string compared by its normalised form."""

    def __init__(self, content: str) -> None:
        self.normalized = normalize(content)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StringValue) and self.normalized == other.normalized

    def __hash__(self) -> int:
        return hash(self.normalized)

    def __repr__(self) -> str:
        return f"S{self.normalized!r}"


class NumberValue(Value):
    """A number; near-integers are truncated to ``int`` as in the official script."""

    def __init__(self, amount: float, original: str | None = None) -> None:
        self.amount: int | float = (
            int(amount) if abs(amount - round(amount)) < 1e-6 else float(amount)
        )
        if not original:
            self.normalized = (
                str(self.amount) if isinstance(self.amount, int) else _py2_float_str(self.amount)
            )
        else:
            self.normalized = normalize(original)

    def match(self, other: Value) -> bool:
        """Normalised strings equal, or both numbers within 1e-6."""
        if self.normalized == other.normalized:
            return True
        if isinstance(other, NumberValue):
            return abs(self.amount - other.amount) < 1e-6
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NumberValue) and self.amount == other.amount

    def __hash__(self) -> int:
        return hash(self.amount)

    def __repr__(self) -> str:
        return f"N({self.amount})"

    @staticmethod
    def parse(text: str) -> int | float | None:
        """Read a number the way Python 2's ``int`` then ``float`` read a byte string.

        Example:
            >>> NumberValue.parse("3"), NumberValue.parse("1e3"), NumberValue.parse("1,000")
            (3, 1000.0, None)
        """
        if _NOT_PY2_NUMERIC.search(text):
            return None
        try:
            return int(text)
        except ValueError:
            pass
        try:
            amount = float(text)
        except ValueError:
            return None
        if math.isnan(amount) or math.isinf(amount):
            return None
        return amount


class DateValue(Value):
    """A ``year-month-day`` date where any part may be unknown (-1)."""

    def __init__(self, year: int, month: int, day: int, original: str | None = None) -> None:
        self.ymd = (year, month, day)
        if not original:
            # The official script compares the day with the string '-1', so an unknown
            # day prints as -1 rather than xx; reproduced on purpose.
            self.normalized = "{}-{}-{}".format(
                year if year != -1 else "xx", month if month != -1 else "xx", day
            )
        else:
            self.normalized = normalize(original)

    def match(self, other: Value) -> bool:
        """Normalised strings equal, or both dates with the same year, month and day."""
        if self.normalized == other.normalized:
            return True
        if isinstance(other, DateValue):
            return self.ymd == other.ymd
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DateValue) and self.ymd == other.ymd

    def __hash__(self) -> int:
        return hash(self.ymd)

    def __repr__(self) -> str:
        return f"D{self.ymd}"

    @staticmethod
    def parse(text: str) -> tuple[int, int, int] | None:
        """Parse ``yyyy-mm-dd`` with ``xx``/``xxxx`` for unknown parts.

        Example:
            >>> DateValue.parse("xxxx-10-17"), DateValue.parse("2011-13-01")
            ((-1, 10, 17), None)
        """
        if _NOT_PY2_NUMERIC.search(text):
            return None
        parts = text.lower().split("-")
        if len(parts) != 3:
            return None
        try:
            year = -1 if parts[0] in ("xx", "xxxx") else int(parts[0])
            month = -1 if parts[1] == "xx" else int(parts[1])
            day = -1 if parts[2] == "xx" else int(parts[2])
        except ValueError:
            return None
        if year == month == day == -1:
            return None
        if month != -1 and not 1 <= month <= 12:
            return None
        if day != -1 and not 1 <= day <= 31:
            return None
        return year, month, day


def to_value(original: str, canon: str | None = None) -> Value:
    """Turn a string (and its canonical form, for targets) into a value.

    Example:
        >>> to_value("1,000", "1000.0"), to_value("1995")
        (N(1000), N(1995))
    """
    if not canon:
        canon = original
    amount = NumberValue.parse(canon)
    if amount is not None:
        return NumberValue(amount, original)
    ymd = DateValue.parse(canon)
    if ymd is not None:
        if ymd[1] == ymd[2] == -1:
            return NumberValue(ymd[0], original)
        return DateValue(*ymd, original=original)
    return StringValue(original)


def to_value_list(originals: Sequence[str], canons: Sequence[str] | None = None) -> list[Value]:
    """Values of a list of strings, de-duplicated (a set, as in the official script).

    Raises:
        ValueError: When ``canons`` is given with a different length.
    """
    if canons is None:
        return list({to_value(x) for x in originals})
    if len(canons) != len(originals):
        raise ValueError(f"{len(originals)} values but {len(canons)} canonical values")
    return list({to_value(x, y) for x, y in zip(originals, canons, strict=True)})


def check_denotation(targets: Sequence[Value], predictions: Sequence[Value]) -> bool:
    """Official set comparison: equal sizes, and each target matched by some prediction.

    Example:
        >>> check_denotation(to_value_list(["a", "b"]), to_value_list(["B", "a", "b"]))
        True
    """
    if len(targets) != len(predictions):
        return False
    return all(any(t.match(p) for p in predictions) for t in targets)


def score_denotation(
    predicted: Sequence[str], target_values: Sequence[str], target_canon: Sequence[str] | None
) -> bool:
    """Whether predicted answer items match the targets (with optional canonical targets).

    Example:
        >>> score_denotation(["1000"], ["1,000"], ["1000.0"])
        True
    """
    targets = to_value_list(list(target_values), list(target_canon) if target_canon else None)
    return check_denotation(targets, to_value_list(list(predicted)))


def load_tagged_targets(paths: Iterable[str | Path]) -> dict[str, list[Value]]:
    """Read target values from tagged files (``id``, ``targetValue``, ``targetCanon`` columns).

    A directory means every ``*.tagged`` file in it (the official script reads every file
    and so fails on anything else placed there).
    """
    targets: dict[str, list[Value]] = {}
    files: list[Path] = []
    for path in map(Path, paths):
        files.extend(sorted(path.glob("*.tagged")) if path.is_dir() else [path])
    for file in files:
        lines = file.read_text(encoding="utf-8").split("\n")
        header = lines[0].split("\t")
        for line in lines[1:]:
            if not line:
                continue
            fields = dict(zip(header, line.split("\t"), strict=False))
            targets[fields["id"]] = to_value_list(
                tsv_unescape_list(fields["targetValue"]), tsv_unescape_list(fields["targetCanon"])
            )
    return targets


def evaluate_prediction_file(
    tagged: Iterable[str | Path], prediction_lines: Iterable[str]
) -> tuple[int, int, float]:
    """Score ``ex_id<TAB>item<TAB>item...`` lines like the official command line.

    Unknown ids are skipped; accuracy is over the known prediction lines, rounded as the
    script prints it.

    Returns:
        ``(num_correct, num_examples, accuracy)``.
    """
    targets = load_tagged_targets(tagged)
    correct = total = 0
    for line in prediction_lines:
        ex_id, *items = line.rstrip("\n").split("\t")
        if ex_id not in targets:
            continue
        total += 1
        correct += check_denotation(targets[ex_id], to_value_list(items))
    return correct, total, round((correct + 1e-9) / (total + 1e-9), 4)
