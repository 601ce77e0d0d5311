"""Warnings: a scripted run for every code, and none on the chains that get it right."""

from __future__ import annotations

import pytest
from answer_helpers import WEATHER, codes, run_chain

from tablereason.answers.records import WARNING_CODES
from tablereason.llm import ScriptedLLM
from tablereason.methods.baselines import TextToSQL
from tablereason.trace import Prediction

SNOW = " f_select_row(where weather = 'snow') -> <END>"
HAIL = " f_select_row(where weather = 'hail') -> <END>"
GROUP = " f_group_column(weather) -> <END>"
ROW = " f_select_row(row 2) -> <END>"

CASES = {
    # code: (question, chain, answer, large mode), each the run that raises it
    "empty_table": ("which day had hail?", HAIL, " 2012-01-01", True),
    "no_match": ("how many days had hail?", HAIL, " 0", True),
    "not_in_table": ("which weather was the most common?", GROUP, " hail", True),
    "whole_row": ("what was the weather on 2012-01-02?", ROW, " 2012-01-02 | snow | 4.1", False),
    "sentence": ("what was the weather on 2012-01-02?", ROW,
                 " On that day the weather in Seattle was very cold.", False),
    "count_mismatch": ("how many days had snow?", SNOW, " 15", True),
}  # fmt: skip


@pytest.mark.parametrize("code", sorted(CASES))
def test_each_code_is_raised_by_its_case(code: str) -> None:
    question, chain, answer, large = CASES[code]
    prediction = run_chain(WEATHER, question, chain, answer, large=large)
    assert code in codes(prediction), prediction.warnings
    warning = next(w for w in prediction.warnings or [] if w.code == code)
    assert len(warning.message) > 20


def test_the_chain_error_code_is_raised_by_a_run_that_stopped_on_an_error() -> None:
    bad = " nothing FROM nowhere"
    prediction = TextToSQL(ScriptedLLM(replies=[bad] * 3)).run(WEATHER, "which day?")
    assert prediction.error and codes(prediction) == ["chain_error"]
    failed = Prediction(answer="snow", error="the model failed after 3 retries")
    assert codes(failed) == ["chain_error"] and "3 retries" in (failed.warnings or [])[0].message


def test_every_code_has_a_case() -> None:
    assert set(CASES) | {"chain_error"} == set(WARNING_CODES)


def test_the_reduced_values_of_suspect_answers() -> None:
    # Chain-of-Table splits " a | b" into a list: a list that covers its row is a row.
    narrow = " f_select_row(row 2) -> f_select_column(date, weather) -> <END>"
    row = run_chain(WEATHER, "what was the weather on 2012-01-02?", narrow, " 2012-01-02 | snow")
    assert row.answer == ["2012-01-02", "snow"]
    assert row.value and row.value.text == "snow" and codes(row) == ["whole_row"]
    # Two cells of a wider row are a list answer.
    pair = run_chain(WEATHER, "what were the date and weather?", ROW, " 2012-01-02 | snow")
    assert pair.value and pair.value.type == "list" and codes(pair) == []
    said = run_chain(WEATHER, "what was the weather on 2012-01-02?", ROW,
                     " The weather on that day was snow.")  # fmt: skip
    assert said.value and said.value.text == "snow" and codes(said) == ["sentence"]
    # The cases: a count from a table emptied by a condition, a sentence naming
    # no cell of the table.
    wrong = run_chain(WEATHER, "how many days had hail?", HAIL, " 15", large=True)
    assert codes(wrong) == ["empty_table", "no_match", "count_mismatch"]


RIGHT = [
    ("how many days had snow?", SNOW, " 3", True),
    ("how many days had snow?", SNOW, " 3 days", True),
    ("how many days had snow?", SNOW, " 3 snow days.", True),
    ("which weather was the most common?", GROUP, " snow", True),
    ("how many days were rainy?", GROUP, " 2", True),
    ("what was the total mm on snow days?", SNOW, " 9.4", True),
    ("what was the weather on 2012-01-02?", ROW, " snow", False),
    ("what was the weather on 2012-01-02?", ROW, " snow.", False),
    ("how many days had hail?", HAIL, " 0", True),  # right, but its condition matched none
]


@pytest.mark.parametrize(("question", "chain", "answer", "large"), RIGHT[:-1])
def test_a_right_chain_raises_no_warning(
    question: str, chain: str, answer: str, large: bool
) -> None:
    assert codes(run_chain(WEATHER, question, chain, answer, large=large)) == []


def test_a_right_zero_count_says_only_that_its_condition_matched_nothing() -> None:
    question, chain, answer, large = RIGHT[-1]
    assert codes(run_chain(WEATHER, question, chain, answer, large=large)) == ["no_match"]


def test_a_check_that_fails_leaves_the_prediction_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tablereason.answers.assess as assess_module

    def broken(*_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(assess_module, "assess", broken)
    prediction = Prediction(answer="snow")
    assert prediction.answer == "snow" and prediction.warnings == []
    assert prediction.evidence and "could not be checked (RuntimeError)" in prediction.evidence.how


@pytest.mark.parametrize("answer", [" 15 days", " 15 snow days.", " 1 day"])
def test_a_wrong_count_with_what_it_counts_is_still_a_count_mismatch(answer: str) -> None:
    wrong = run_chain(WEATHER, "how many days had snow?", SNOW, answer, large=True)
    assert codes(wrong) == ["count_mismatch"]
    assert wrong.value is not None and wrong.value.type == "number"
