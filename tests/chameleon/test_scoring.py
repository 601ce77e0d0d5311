"""Scoring Chameleon predictions with the registered metrics: paper versus default."""

from __future__ import annotations

from typing import Any

import pytest

from tablereason.datasets.example import Example
from tablereason.methods.chameleon import paper_answer, score
from tablereason.trace import Prediction, Trace, TraceStep


def pred(answer: str, raw: Any, error: str | None = None) -> Prediction:
    trace = Trace(steps=[TraceStep(kind="answer", name="answer_generator",
                                   arguments={"answer": answer, "raw_answer": raw})])  # fmt: skip
    return Prediction(answer=answer, trace=trace, error=error, raw_answer=raw)


def tabmwp(gold: str, ans_type: str = "integer_number", choices: list[str] | None = None,
           unit: str | None = None) -> Example:  # fmt: skip
    return Example(dataset="tabmwp", id="x", question="?", answer=gold, choices=choices,
                   metadata={"ans_type": ans_type, "unit": unit, "grade": 3,
                             "ques_type": "multi_choice" if choices else "free_text"})  # fmt: skip


def both(example: Example, prediction: Prediction) -> tuple[bool, bool]:
    result = score("tabmwp", {example.id: prediction}, [example])
    return result["paper"].score == 1.0, result["default"].score == 1.0


@pytest.mark.parametrize(("gold", "ans_type", "answer", "raw", "paper", "default"), [
    # fractions
    ("3/10", "decimal_number", "0.3", 0.3, True, True),
    ("3/10", "decimal_number", "0.25", 0.25, False, False),  # round(0.25, 1) = 0.2
    ("2/11", "decimal_number", "0.18", 0.18, True, True),
    ("2/11", "decimal_number", "0.2", 0.2, True, False),  # rounds to the coarser precision
    ("3/10", "decimal_number", "3/10", "3/10", True, True),
    # thousands separators
    ("4,656", "integer_number", "4,656", "4,656", True, True),
    ("4,656", "integer_number", "4656", 4656.0, True, True),
    ("1,234", "integer_number", "12,34", "12,34", True, False),
    # percentages
    ("84", "integer_number", "84%", "84%", False, True),
    # precision
    ("84", "integer_number", "84.04", 84.04, True, False),
    ("84", "integer_number", "84.06", 84.06, False, False),
    ("3.30", "decimal_number", "3.34", 3.34, True, False),
])  # fmt: skip
def test_tabmwp_numbers(gold: str, ans_type: str, answer: str, raw: Any,
                        paper: bool, default: bool) -> None:  # fmt: skip
    assert both(tabmwp(gold, ans_type), pred(answer, raw)) == (paper, default)


def test_tabmwp_units() -> None:
    money = tabmwp("4,656", unit="$")
    assert both(money, pred("$4,656", "$4,656")) == (True, True)
    buildings = tabmwp("5", unit="buildings")
    assert both(buildings, pred("5 Buildings", "5 Buildings")) == (False, True)
    assert both(buildings, pred("5 buildings", "5 buildings")) == (True, True)


def test_tabmwp_options_and_booleans() -> None:
    yes_no = tabmwp("no", "boolean_text", ["yes", "no"])
    assert both(yes_no, pred("no", False)) == (True, True)
    assert both(yes_no, pred("yes", True)) == (False, False)
    assert both(yes_no, pred("No", "No")) == (True, True)
    first = tabmwp("Australia", "extractive_text", ["Australia", "Belgium"])
    # A missing answer gets the first option for free, only in the published scoring.
    assert paper_answer(pred("", None), first.choices) == ""
    assert both(first, pred("", None)) == (True, False)
    # A number for a text option is never right in the published scoring.
    assert both(first, pred("4", 4.0))[0] is False
    assert both(first, pred("australia", "australia")) == (True, True)


def test_failed_prediction_counts_as_wrong() -> None:
    first = tabmwp("Australia", "extractive_text", ["Australia", "Belgium"])
    failed = pred("", None, error="the model failed")
    result = score("tabmwp", {"x": failed}, [first])
    assert result["paper"].n == 1 and result["paper"].correct == 0
    missing = score("tabmwp", {}, [first])
    assert missing["default"].n == 1 and missing["default"].score == 0.0


def test_scienceqa_breakdowns_grade_one(scienceqa_examples: dict[str, Example]) -> None:
    base = scienceqa_examples["93"]
    metadata = {**base.metadata, "grade": "grade1", "grade_number": 1}
    grade1 = base.model_copy(update={"id": "g1", "metadata": metadata})
    examples = [base, grade1]
    predictions = {"93": pred("acquired", "acquired"), "g1": pred("inherited", "inherited")}
    result = score("scienceqa", predictions, examples)
    assert result["default"].score == result["paper"].score == 0.5
    assert result["default"].breakdown["grade_1_6"].n == 2
    assert result["paper"].breakdown["grade_1_6"].n == 1  # the published list starts at grade 2
    assert result["default"].breakdown["nat"].n == 2
    assert result["default"].breakdown["txt"].n == 2
