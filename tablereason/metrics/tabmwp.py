"""TabMWP answer scoring: Chameleon's published normalisation (``paper``) and a stricter default.

``paper`` reproduces chameleon-llm's ``normalize_prediction_tabmwp``,
``normalize_ground_tabmwp`` and ``safe_equal`` exactly. The default scorer fixes the
places where the published code is wrong or too lenient:

==========================================  ==============================  =====================
case                                        paper                           default
==========================================  ==============================  =====================
no answer on a multiple-choice question     first option (a free hit)       wrong
answer matching no option                   most similar option, option 0   wrong unless one option
                                            when all similarities are 0     is the unique best match
number given for a multiple-choice gold     always wrong                    compared as text
unit removal                                case-sensitive substring,       case-insensitive whole
                                            before lower-casing; also       word, numeric answers
                                            inside option text              only
number comparison                           rounded to the coarser of the   equal within 1e-9
                                            two printed precisions (gold    relative; a fraction
                                            84 accepts 84.04; gold 1e-05    gold also accepts its
                                            accepts 0)                      value rounded to 2+
                                                                            decimals
"x%"                                        x / 100                         x (as written)
"1/2/3"                                     1/2 (extra parts ignored)       not a number
"12,34"                                     1234 (every comma dropped)      not a number (commas
                                                                            must group thousands)
"True"/"False" text for yes/no gold         similarity pick                 yes/no (true/false)
==========================================  ==============================  =====================

A missing or failed prediction (``None``) is wrong under both, as everywhere in the
library; an empty string still gets the published first-option pick under ``paper``.

Predictions may be strings (what methods return) or the raw program values Chameleon
scored (``float``, ``bool``, ``None``); both scorers accept either.
"""

from __future__ import annotations

import contextlib
import math
import re
from fractions import Fraction
from typing import Any

Raw = str | float | int | bool | None


# --------------------------------------------------------------------------- paper


def string_similarity(a: str, b: str) -> float:
    """Chameleon's ``score_string_similarity``: 2 if equal, else word overlap if spaced, else 0.

    Example:
        >>> string_similarity("yes", "the answer is yes")
        0.25
    """
    if a == b:
        return 2.0
    if " " in a or " " in b:
        a_words, b_words = a.split(" "), b.split(" ")
        return len(set(a_words) & set(b_words)) / max(len(a_words), len(b_words))
    return 0.0


def _number_cascade(text: str) -> float:
    """The "/" -> "," -> "%" -> float cascade of the published code (raises on failure)."""
    if "/" in text:
        parts = text.split("/")
        return int(parts[0]) / int(parts[1])
    if "," in text:
        return float(text.replace(",", ""))
    if "%" in text:
        return float(text.split("%")[0]) / 100
    return float(text)


def normalize_prediction_paper(pred: Raw, options: list[str] | None, unit: str | None) -> Any:
    """``normalize_prediction_tabmwp`` as published.

    Example:
        >>> normalize_prediction_paper("$1,200", None, None)
        1200.0
    """
    if isinstance(pred, float):
        return round(pred, 3)
    value: Any = pred
    if isinstance(value, str):
        value = value.replace("$", "")
        if unit:
            value = value.replace(unit, "")
        value = value.strip().lower()
        if not options:
            with contextlib.suppress(ValueError, ZeroDivisionError, IndexError):
                value = _number_cascade(value)
    if options:
        lowered = [o.lower() for o in options]
        if value is None:
            value = lowered[0]
        elif isinstance(value, str) and value not in lowered:
            scores = [string_similarity(o, value) for o in lowered]
            value = lowered[scores.index(max(scores))]
    return value


def normalize_ground_paper(gold: str, ans_type: str) -> Any:
    """``normalize_ground_tabmwp`` as published.

    Raises:
        ValueError: For an unknown answer type, as the published code does.
    """
    if ans_type in ("integer_number", "decimal_number"):
        return _number_cascade(gold)
    if ans_type.endswith("_text"):
        return str(gold)
    raise ValueError(f"unknown TabMWP ans_type {ans_type!r}")


def _precision(x: Any) -> int:
    text = str(x)
    return len(text.split(".")[-1]) if "." in text else 5


def safe_equal_paper(pred: Any, ref: Any) -> bool:
    """``safe_equal`` as published (``include_percentage`` and ``is_close`` off)."""
    if pred is None:
        return False
    if type(pred) is bool:
        return bool(ref == "yes") if pred else bool(ref == "no")
    if type(pred) is str and type(ref) is str:
        return pred.strip().lower() == ref.strip().lower()
    try:
        precision = min(_precision(pred), _precision(ref))
        return bool(round(pred, precision) == round(ref, precision))
    except Exception:  # the published code treats any failure as a mismatch
        return False


def score_paper(
    pred: Raw, gold: str, ans_type: str, options: list[str] | None, unit: str | None
) -> bool:
    """Chameleon's published TabMWP correctness for one problem.

    Example:
        >>> score_paper("84.04", "84", "integer_number", None, None)
        True
    """
    return safe_equal_paper(
        normalize_prediction_paper(pred, options, unit), normalize_ground_paper(gold, ans_type)
    )


# --------------------------------------------------------------------------- strict default

_NUMBER = re.compile(r"^([+-]?)(\d{1,3}(?:,\d{3})+|\d*)(\.\d+)?$")
_FRACTION = re.compile(r"^([+-]?\d+)\s*/\s*(\d+)$")
_BOOL_WORDS = {"true": ("yes", "true"), "false": ("no", "false")}


def _clean_text(text: str, unit: str | None) -> str:
    text = text.strip()
    if unit and unit.strip():
        pattern = rf"(?<!\w){re.escape(unit.strip())}(?!\w)"
        text = re.sub(pattern, "", text, flags=re.IGNORECASE)
    text = text.replace("$", "").strip().lower()
    return text[:-1].strip() if text.endswith(".") else text


def parse_number(text: str) -> tuple[Fraction, int] | None:
    """Parse ``1,234.5``, ``-3/4``, ``12%`` (as 12) into an exact value and its decimals.

    Returns:
        ``(value, decimals)``; ``decimals`` is ``-1`` for fractions. ``None`` if not a number.

    Example:
        >>> parse_number("1,234.50")
        (Fraction(2469, 2), 2)
    """
    text = text.strip().rstrip("%").strip()
    fraction = _FRACTION.match(text)
    if fraction:
        denominator = int(fraction.group(2))
        if denominator == 0:
            return None
        return Fraction(int(fraction.group(1)), denominator), -1
    match = _NUMBER.match(text)
    if not match or not (match.group(2) or match.group(3)):
        return None
    sign, whole, decimals = match.groups()
    value = Fraction((whole or "0").replace(",", "") + (decimals or ""))
    return (-value if sign == "-" else value), len(decimals or ".") - 1


def _numbers_equal(pred: Fraction, pred_decimals: int, gold: Fraction, gold_decimals: int) -> bool:
    if abs(pred - gold) <= Fraction(1, 10**9) * max(Fraction(1), abs(gold)):
        return True
    # A fraction gold also accepts its decimal value rounded to two or more places.
    return gold_decimals == -1 and pred_decimals >= 2 and round(gold, pred_decimals) == pred


def _pred_text(pred: Raw) -> str | None:
    if pred is None:
        return None
    if isinstance(pred, bool):
        return "true" if pred else "false"
    if isinstance(pred, float):
        return str(int(pred)) if pred.is_integer() else repr(pred)
    return str(pred)


def _pick_option(text: str, options: list[str]) -> str | None:
    lowered = [o.strip().lower() for o in options]
    if text in lowered:
        return text
    for word, synonyms in _BOOL_WORDS.items():
        if text == word:
            found = [o for o in lowered if o in synonyms]
            if len(found) == 1:
                return found[0]
    scores = [string_similarity(o, text) for o in lowered]
    best = max(scores)
    if best > 0 and scores.count(best) == 1:
        return lowered[scores.index(best)]
    return None


def score_strict(
    pred: Raw, gold: str, ans_type: str, options: list[str] | None, unit: str | None
) -> bool:
    """The default TabMWP correctness (see the module table for how it differs from ``paper``).

    Example:
        >>> score_strict("84.04", "84", "integer_number", None, None)
        False
    """
    raw = _pred_text(pred)
    if raw is None:
        return False
    if options:
        picked = _pick_option(_clean_text(raw, None), options)
        return picked is not None and picked == gold.strip().lower()
    if ans_type in ("integer_number", "decimal_number"):
        if isinstance(pred, bool):
            return False
        text = _clean_text(raw, unit)
        gold_number = parse_number(gold)
        pred_number = _raw_number(pred) if isinstance(pred, (int, float)) else parse_number(text)
        if gold_number is None or pred_number is None:
            return False
        return _numbers_equal(pred_number[0], pred_number[1], gold_number[0], gold_number[1])
    return _clean_text(raw, unit) == _clean_text(gold, unit)


def _raw_number(pred: float) -> tuple[Fraction, int] | None:
    """A program's numeric value, exactly, with the decimals its shortest repr shows."""
    if isinstance(pred, int):
        return Fraction(pred), 0
    if not math.isfinite(pred):
        return None
    text = repr(pred)
    decimals = len(text.split(".")[-1]) if "." in text and "e" not in text else 16
    return Fraction(text), decimals
