"""WikiTQ evaluator behaviour, checked against the official tagged targets."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablereason.datasets import load_dataset
from tablereason.evaluate import evaluate
from tablereason.metrics.wikitq import (
    DateValue,
    NumberValue,
    StringValue,
    check_denotation,
    evaluate_prediction_file,
    load_tagged_targets,
    normalize,
    to_value,
    to_value_list,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Café [1]", "cafe"),
        ("Smith (footballer)", "smith"),
        ("A (x) (y)", "a"),
        ("(a) b", "(a) b"),
        ("U.S.", "u.s"),
        ("“Hello”", "hello"),
        ("Foo†", "foo"),
        ('"Foo" [2]', "foo"),  # loop: citation removed, then quotes
        ("ﬁne", "fine"),
        ("x ´ y", "x y"),  # NFKD turns the acute accent into space + combining mark
        ("Bar [a] [b]", "bar"),
        ("[1]", ""),  # the digit-citation branch has no start guard
        ("[a]", "[a]"),  # the general bracket branch does
    ],
)
def test_normalize_examples(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


def test_value_types() -> None:
    assert isinstance(to_value("1,000"), StringValue)
    assert isinstance(to_value("1,000", "1000.0"), NumberValue)
    assert isinstance(to_value("Jan 1995", "1995-01-xx"), DateValue)
    assert isinstance(to_value("1995", "1995-xx-xx"), NumberValue)
    assert isinstance(to_value("Dec", "xx-12-xx"), DateValue)
    assert NumberValue.parse("nan") is None and NumberValue.parse("inf") is None
    assert NumberValue.parse(" 12 ") == 12
    assert NumberValue.parse("٣") is None  # non-ASCII digits were bytes to the Python 2 script
    assert DateValue.parse("2011-02-30") == (2011, 2, 30)  # only ranges are checked
    assert DateValue.parse("xx-xx-xx") is None


def test_gold_scored_against_itself_is_perfect(each_data: Path) -> None:
    examples = load_dataset("wikitq", "test", data_dir=each_data)
    assert all(e.metadata["target_canon"] is not None for e in examples)
    result = evaluate("wikitq_accuracy", {e.id: e.answer for e in examples}, examples)
    assert result.score == 1.0


def test_canonical_values_as_predictions_match_their_targets(each_data: Path) -> None:
    # targetValue and targetCanon must agree: predicting the canonical strings is correct.
    examples = load_dataset("wikitq", "test", data_dir=each_data)
    canon = {e.id: e.metadata["target_canon"] for e in examples}
    assert evaluate("wikitq_accuracy", canon, examples).score == 1.0
    kinds = {e.metadata["target_canon_type"] for e in examples}
    assert {"number", "date", "string"} <= kinds


def test_official_prediction_file_denominator_is_the_predicted_lines(fixture_data: Path) -> None:
    tagged = [fixture_data / "wikitq" / "data" / "test.tagged"]
    examples = load_dataset("wikitq", "test", data_dir=fixture_data)
    lines = [e.id + "\t" + "\t".join(e.answer) for e in examples[:20]]
    lines += [f"{examples[20].id}\twrong answer", "nu-unknown\tx"]
    correct, total, accuracy = evaluate_prediction_file(tagged, lines)
    assert (correct, total, accuracy) == (20, 21, round(20 / 21, 4))
    # The library metric divides by every example asked for instead.
    preds = {e.id: e.answer for e in examples[:20]}
    assert evaluate("wikitq_accuracy", preds, examples[:25]).score == pytest.approx(20 / 25)


def test_tagged_targets_load_from_a_directory(each_data: Path) -> None:
    # The folder also holds the question TSVs; only *.tagged files are read.
    folder = each_data / "wikitq" / "data"
    targets = load_tagged_targets([folder])
    lines = (folder / "test.tagged").read_text(encoding="utf-8").splitlines()
    assert len(targets) == len(lines) - 1  # the header line
    assert set(targets) == {line.split("\t", 1)[0] for line in lines[1:]}


@given(st.lists(st.text(max_size=8), min_size=1, max_size=4))
def test_any_answer_list_matches_itself_in_any_order(items: list[str]) -> None:
    values = to_value_list(items)
    assert check_denotation(values, to_value_list(list(reversed(items))))
