"""Dataset-level scoring: denominators, missing and failed predictions, breakdowns."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablereason.datasets import Example, load_dataset
from tablereason.errors import ConfigurationError, UnknownNameError
from tablereason.evaluate import METRICS, evaluate
from tablereason.trace import Prediction


def _tabfact(n: int) -> list[Example]:
    return [
        Example(
            dataset="tabfact",
            id=f"e{i}",
            question="s",
            answer="yes" if i % 2 else "no",
            metadata={"label": i % 2},
        )
        for i in range(n)
    ]


def test_missing_and_failed_predictions_count_as_wrong() -> None:
    examples = _tabfact(4)  # labels 0, 1, 0, 1
    predictions = {
        "e0": Prediction(answer="no"),
        "e1": Prediction(answer="yes", error="model timed out"),  # failed: wrong
        "e2": None,  # missing: wrong
        # e3 absent: wrong
    }
    result = METRICS.get("tabfact_accuracy")(predictions, examples)
    assert (result.n, result.correct, result.score) == (4, 1.0, 0.25)
    assert result.breakdown["refuted"].n == 2
    assert result.breakdown["refuted"].correct == 1
    assert result.breakdown["entailed"].correct == 0


def test_sequence_predictions_align_with_examples() -> None:
    examples = _tabfact(3)
    result = evaluate("tabfact_accuracy", ["no", "yes", {"answer": "yes"}], examples)
    assert result.correct == 2
    with pytest.raises(ConfigurationError, match="one entry per example"):
        evaluate("tabfact_accuracy", ["no"], examples)


def test_mapping_prediction_with_error_is_wrong() -> None:
    examples = _tabfact(2)
    result = evaluate(
        "tabfact_accuracy",
        {"e0": {"answer": "no", "error": "boom"}, "e1": {"answer": "yes"}},
        examples,
    )
    assert result.correct == 1


def test_empty_example_list() -> None:
    result = evaluate("wikitq_accuracy", {}, [])
    assert (result.n, result.score) == (0, 0.0)


def test_unknown_metric_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="wikitq_accuracy"):
        METRICS.get("wikitq_acuracy")


def test_percent_property() -> None:
    result = evaluate("tabfact_accuracy", {"e1": "yes"}, _tabfact(2))
    assert result.percent == pytest.approx(50.0)


def test_scienceqa_breakdowns_and_paper_grade_one_omission() -> None:
    def ex(pid: str, grade: int, subject: str, hint: str, image: str | None) -> Example:
        return Example(
            dataset="scienceqa",
            id=pid,
            question="q",
            answer="A",
            choices=["A", "B"],
            context=hint,
            metadata={
                "subject": subject,
                "grade": f"grade{grade}",
                "grade_number": grade,
                "image": image,
            },
        )

    examples = [
        ex("1", 1, "natural science", "", None),
        ex("2", 3, "social science", "hint", None),
        ex("3", 8, "language science", "", "image.png"),
        ex("4", 12, "natural science", "hint", "image.png"),
    ]
    preds = {"1": "A", "2": "B", "3": "a", "4": "A"}
    default = evaluate("scienceqa_accuracy", preds, examples)
    paper = evaluate("scienceqa_accuracy_paper", preds, examples)
    assert default.score == paper.score == 0.75
    assert (default.breakdown["grade_1_6"].n, default.breakdown["grade_1_6"].correct) == (2, 1)
    assert (paper.breakdown["grade_1_6"].n, paper.breakdown["grade_1_6"].correct) == (1, 0)
    assert default.breakdown["grade_7_12"].n == 2
    assert default.breakdown["nat"].n == 2
    assert default.breakdown["txt"].n == 2
    assert default.breakdown["img"].n == 2
    assert default.breakdown["no"].n == 1


def test_tabmwp_breakdowns_follow_the_published_groups(each_data: Path) -> None:
    examples = load_dataset("tabmwp", "test", data_dir=each_data)
    gold = {e.id: e.answer for e in examples}
    result = evaluate("tabmwp_accuracy", gold, examples)
    assert result.score == 1.0
    assert result.breakdown["free_text"].n + result.breakdown["multi_choice"].n == len(examples)
    assert result.breakdown["grade_1_6"].n + result.breakdown["grade_7_8"].n == len(examples)
    types = ["integer_number", "decimal_number", "extractive_text", "boolean_text", "other_text"]
    assert sum(result.breakdown[t].n for t in types) == len(examples)


def test_paper_tabmwp_free_hit_only_for_empty_answers_not_missing_ones() -> None:
    ex = Example(
        dataset="tabmwp",
        id="p",
        question="q",
        answer="yes",
        choices=["yes", "no"],
        metadata={"ans_type": "boolean_text", "ques_type": "multi_choice", "grade": 3},
    )
    assert evaluate("tabmwp_accuracy_paper", {"p": ""}, [ex]).score == 1.0
    assert evaluate("tabmwp_accuracy_paper", {}, [ex]).score == 0.0
    assert evaluate("tabmwp_accuracy", {"p": ""}, [ex]).score == 0.0


def test_hotpotqa_extras_average_over_all_examples() -> None:
    examples = [
        Example(
            dataset="hotpotqa",
            id="a",
            question="q",
            answer="the Beatles",
            metadata={"type": "bridge"},
        ),
        Example(
            dataset="hotpotqa", id="b", question="q", answer="yes", metadata={"type": "comparison"}
        ),
    ]
    result = evaluate("hotpotqa_em", {"a": "Beatles band"}, examples)
    assert result.score == 0.0
    assert result.extra["f1"] == pytest.approx((2 * 0.5 / 1.5) / 2)
    assert result.extra["precision"] == pytest.approx(0.25)
    assert result.extra["recall"] == pytest.approx(0.5)
    f1 = evaluate("hotpotqa_f1", {"a": "Beatles band", "b": "yes"}, examples)
    assert f1.score == pytest.approx((2 * 0.5 / 1.5 + 1) / 2)
    assert f1.breakdown["comparison"].score == 1.0


def test_gold_answers_score_perfectly_on_every_dataset(each_data: Path) -> None:
    from tablereason.datasets import DATASETS

    for name in DATASETS.names():
        spec = DATASETS.get(name)
        examples = load_dataset(name, data_dir=each_data)
        result = evaluate(spec.default_metric, {e.id: e.answer for e in examples}, examples)
        assert result.score == 1.0, name
        assert result.n == len(examples)
        wrong = evaluate(spec.default_metric, {}, examples)
        assert (wrong.score, wrong.n) == (0.0, len(examples))
