"""HotpotQA answer exact match and F1, equal to ``hotpot_evaluate_v1.py`` (answer part).

ReWOO scores HotpotQA with the same normalisation and the same yes/no/noanswer rule,
so one implementation serves both.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import NamedTuple

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
_SPECIAL = ("yes", "no", "noanswer")


class F1Score(NamedTuple):
    """Token-level F1 with its precision and recall."""

    f1: float
    precision: float
    recall: float


def normalize_answer(text: str) -> str:
    """Lower-case, drop ASCII punctuation, replace articles by a space, collapse whitespace.

    Example:
        >>> normalize_answer("The  Eiffel-Tower!")
        'eiffeltower'
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> bool:
    """Whether the normalised strings are equal.

    Example:
        >>> exact_match("the Beatles", "Beatles.")
        True
    """
    return normalize_answer(prediction) == normalize_answer(gold)


def f1_score(prediction: str, gold: str) -> F1Score:
    """Token F1; 0 when either side is yes/no/noanswer and the two differ.

    Example:
        >>> round(f1_score("Chief of Protocol", "chief of protocol of the US").f1, 3)
        0.75
    """
    pred = normalize_answer(prediction)
    ref = normalize_answer(gold)
    zero = F1Score(0.0, 0.0, 0.0)
    if (pred in _SPECIAL or ref in _SPECIAL) and pred != ref:
        return zero
    pred_tokens = pred.split()
    ref_tokens = ref.split()
    same = sum((Counter(pred_tokens) & Counter(ref_tokens)).values())
    if same == 0:
        return zero
    precision = same / len(pred_tokens)
    recall = same / len(ref_tokens)
    return F1Score(2 * precision * recall / (precision + recall), precision, recall)
