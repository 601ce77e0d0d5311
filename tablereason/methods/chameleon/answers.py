r"""Answer extraction for Chameleon: from a program value or a solution to the final answer.

The published extraction is kept for the ``paper`` profile (``floatify``, the
unanchored ``The answer is ([\s\S]+).$`` regex, ScienceQA's first-letter match and
similarity fallback); the default extraction reads the last stated answer, keeps
the whole of it and never invents one. Scoring itself lives in
:mod:`tablereason.metrics.scorers`; :func:`score` only feeds it.

Example:
    >>> extract_tabmwp("So 12 + 1 = 13. The answer is 13.", paper=True)
    '13'
    >>> extract_tabmwp("The answer is yes", paper=True)
    'ye'
    >>> extract_tabmwp("The answer is yes", paper=False)
    'yes'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tablereason.metrics.scorers import METRICS, MetricResult, tabmwp_paper_answer
from tablereason.metrics.tabmwp import string_similarity

_PAPER_TABMWP = re.compile(r"The answer is ([\s\S]+).$")
_DEFAULT_TABMWP = re.compile(r"answer is:?[ \t]*(?=\S)", re.I)
_PAPER_LETTER = re.compile(r"[Tt]he answer is ([A-Z])")
_DEFAULT_LETTER = re.compile(r"answer is:?\s*\(?([A-E])\)?(?![A-Za-z0-9])", re.I)
LETTERS = "ABCDE"


def has_answer(solution: str, *, task: str, paper: bool) -> bool:
    """Whether a solution states an answer (the solution generator's success test).

    Example:
        >>> has_answer("The answer is 5", task="tabmwp", paper=True)
        False
        >>> has_answer("The answer is 5", task="tabmwp", paper=False)
        True
    """
    if task == "scienceqa":
        pattern = _PAPER_LETTER if paper else _DEFAULT_LETTER
        return pattern.search(solution) is not None
    if paper:
        return bool(_PAPER_TABMWP.findall(solution))
    return _DEFAULT_TABMWP.search(solution) is not None


def extract_tabmwp(solution: str, *, paper: bool) -> str:
    """The answer stated in a TabMWP solution (the whole text when none is stated).

    Example:
        >>> extract_tabmwp("It costs $4. The answer is $4.", paper=False)
        '$4'
    """
    if paper:
        found = _PAPER_TABMWP.findall(solution)
        return found[-1].strip() if found else solution
    starts = list(_DEFAULT_TABMWP.finditer(solution))
    if not starts:
        return solution.strip()
    tail = solution[starts[-1].end() :].strip().splitlines()[0].strip()
    return tail.removesuffix(".").strip().strip("\"'").strip()


def floatify(value: Any) -> Any:
    """The published ``floatify_ans``: a number when it reads as one, else text.

    Example:
        >>> floatify(7), floatify("8.20"), floatify("5 buildings"), floatify([3, 4])
        (7.0, 8.2, '5 buildings', 3.0)
    """
    if value is None:
        return None
    if isinstance(value, dict):
        return next(iter(value.values()), None)
    if isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple)):
        if not value:
            return None
        value = value[0]
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return str(value)


def answer_text(value: Any) -> str:
    """A raw answer as text: integral floats without ``.0``, booleans as yes/no words.

    Example:
        >>> answer_text(12.0), answer_text(2.5), answer_text(True), answer_text(None)
        ('12', '2.5', 'true', '')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(answer_text(v) for v in value)
    return str(value).strip()


def match_option(text: str, options: Sequence[str]) -> str | None:
    """The option ``text`` names, or None when ambiguous.

    Tried in order: an exact (case-insensitive) match, a true/false word for a yes/no
    option, the only option the text contains.

    Example:
        >>> match_option("The answer is Reardon Corporation", ["Henderson Co.",
        ...              "Reardon Corporation"])
        'Reardon Corporation'
        >>> match_option("true", ["yes", "no"])
        'yes'
    """
    lowered = text.strip().strip(".").strip().lower()
    for option in options:
        if option.strip().lower() == lowered:
            return option
    synonyms = {"true": ("yes", "true"), "false": ("no", "false")}
    if lowered in synonyms:
        found = [o for o in options if o.strip().lower() in synonyms[lowered]]
        if len(found) == 1:
            return found[0]
    inside = [o for o in options if re.search(rf"(?<!\w){re.escape(o.lower())}(?!\w)", lowered)]
    longest = [o for o in inside if not any(o != p and o.lower() in p.lower() for p in inside)]
    return longest[0] if len(longest) == 1 else None


def choose_scienceqa(solution: str | None, choices: Sequence[str], *, paper: bool) -> str:
    """The option a ScienceQA solution picks.

    ``paper``: the first ``[Tt]he answer is X`` letter within range, else the option
    most similar to the whole solution (the first option when nothing was generated).
    Default: the last stated letter within range, else the one option named after
    "answer is", else the one option the solution names at all, else ``""`` (no answer).

    Example:
        >>> choose_scienceqa("The answer is B.", ["cat", "dog"], paper=False)
        'dog'
        >>> choose_scienceqa("The answer is Apple", ["apple", "pear"], paper=True)
        'apple'
    """
    if paper:
        if solution is not None:
            found = _PAPER_LETTER.findall(solution)
            if found and found[0] in LETTERS[: len(choices)]:
                return choices[LETTERS.index(found[0])]
        options = [c.lower() for c in choices]
        if solution is None:
            return options[0]
        scores = [string_similarity(o, solution) for o in options]
        return options[scores.index(max(scores))]
    if not solution:
        return ""
    letters = [m.upper() for m in _DEFAULT_LETTER.findall(solution)]
    letters = [m for m in letters if m in LETTERS[: len(choices)]]
    if letters:
        return choices[LETTERS.index(letters[-1])]
    tail = solution.lower().rsplit("answer is", 1)
    named = match_option(tail[-1], choices) if len(tail) == 2 else None
    return named or match_option(solution, choices) or ""


def paper_answer(prediction: Any, choices: Sequence[str] | None = None) -> Any:
    """The raw answer the published TabMWP scorer would see for a prediction.

    It is the prediction's ``raw_answer`` (the answer generator's value). A missing
    answer on a multiple-choice question becomes ``""``, so the paper metric gives it the
    first option, as the published code does; a failed run stays None (wrong). The rule
    lives in :func:`tablereason.metrics.scorers.tabmwp_paper_answer`, which the
    ``tabmwp_accuracy_paper`` metric applies to every prediction and result record.

    Example:
        >>> paper_answer(None) is None, paper_answer(84.04)
        (True, 84.04)
    """
    return tabmwp_paper_answer(prediction, choices)


def score(
    task: str, predictions: Mapping[str, Any], examples: Sequence[Any]
) -> dict[str, MetricResult]:
    """Score Chameleon predictions with the registered metrics, default and paper.

    TabMWP's paper score reads each prediction's raw answer (:func:`paper_answer`);
    ScienceQA's two scores differ only in the grade breakdown. ``predictions`` maps
    example ids to :class:`~tablereason.trace.Prediction` objects, result records or
    bare answers.

    Returns:
        ``{"default": ..., "paper": ...}``.

    Example:
        >>> from tablereason.datasets.example import Example
        >>> ex = Example(dataset="scienceqa", id="1", question="?", answer="dog",
        ...              choices=["cat", "dog"], metadata={"grade": "grade1", "subject": "x"})
        >>> score("scienceqa", {"1": "dog"}, [ex])["default"].score
        1.0
    """
    names = (
        ("tabmwp_accuracy", "tabmwp_accuracy_paper")
        if task == "tabmwp"
        else ("scienceqa_accuracy", "scienceqa_accuracy_paper")
    )
    return {
        "default": METRICS.get(names[0])(predictions, examples),
        "paper": METRICS.get(names[1])(predictions, examples),
    }
