"""The typed value of an answer: the same shape from every method, normalised."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason import Table
from tablereason.answers.cells import TableCells
from tablereason.answers.normalise import normalise_item
from tablereason.answers.value import read_date, read_number, scalar, typed

SETTINGS = settings(max_examples=80, deadline=None)
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)


@SETTINGS
@given(texts)
def test_a_one_item_list_and_a_string_give_the_same_value(text: str) -> None:
    # WikiTQ methods answer ["13"], a program "13", a baseline "13 ": one value.
    assert typed([text]) == typed(text) == typed([text, ""]) == typed(f"  {text} ")


@SETTINGS
@given(st.integers(-(10**50), 10**50))
def test_integers_read_back_whole_with_or_without_separators(n: int) -> None:
    assert read_number(str(n)) == n
    assert read_number(f"{n:,}") == n
    assert isinstance(scalar(f"{n:,}").value, int) and scalar(str(n)).type == "number"


@SETTINGS
@given(st.floats(-1e9, 1e9, allow_nan=False).map(lambda x: round(x, 3)))
def test_decimals_read_back_as_floats(x: float) -> None:
    text = f"{x:.3f}"
    assert read_number(text) == float(text)
    assert read_number(f"${abs(x):,.3f}") == abs(float(text))


@SETTINGS
@given(st.dates(dt.date(1000, 1, 1), dt.date(2999, 12, 31)))
def test_dates_read_in_every_written_form(day: dt.date) -> None:
    month = day.strftime("%B")
    for text in (day.isoformat(), f"{day.year}/{day.month}/{day.day}",
                 f"{month} {day.day}, {day.year}", f"{day.day} {month} {day.year}",
                 f"{month[:3]} {day.day} {day.year}"):  # fmt: skip
        assert read_date(text) == day.isoformat(), text
        assert scalar(text).type == "date"


def test_the_types_of_every_methods_answers() -> None:
    assert [scalar(t).type for t in ("yes", "No", "TRUE", "3/4", "12%", "$5.20", "1985")] == [
        "boolean", "boolean", "boolean", "number", "number", "number", "number",
    ]  # fmt: skip
    assert [scalar(t).type for t in ("Dream", "12 km", "2012-13-40", "", " ")] == [
        "text", "text", "text", "none", "none",
    ]  # fmt: skip
    assert typed(["a", "b"]).model_dump()["value"][1]["value"] == "b"
    assert typed([]).type == "none" and typed(["", " "]).type == "none"
    # A 46-digit number stays exact.
    assert scalar("1" * 46).value == int("1" * 46)


@SETTINGS
@given(st.sampled_from(["13", "Oslo", "1,104", "New York"]), st.sampled_from(".,;:!?"))
def test_trailing_punctuation_is_dropped(value: str, mark: str) -> None:
    assert normalise_item(value + mark, None, "q?").text == value
    assert normalise_item(f'"{value}{mark}"', None, "q?").text == value


def test_punctuation_that_is_part_of_a_value_stays() -> None:
    cells = TableCells(Table.from_records(["name"], [["Smith Jr."], ["Oslo"]]))
    assert normalise_item("Smith Jr.", cells, "who?").text == "Smith Jr."  # a cell as written
    assert normalise_item("U.S.", None, "where?").text == "U.S."  # another dot in it
    assert normalise_item("3.5.", None, "how much?").text == "3.5"


PENGUINS = Table.from_records(
    ["species", "island", "bill"],
    [["Adelie", "Torgersen", "39.1"], ["Chinstrap", "Dream", "46.5"], ["Gentoo", "Biscoe", "50"]],
)


def test_a_sentence_is_reduced_to_the_one_cell_it_names() -> None:
    cells = TableCells(PENGUINS)
    question = "on which island do chinstrap penguins live?"
    item = normalise_item("Chinstrap penguins live on the island of Dream.", cells, question)
    assert (item.text, item.shape) == ("Dream", "sentence") and item.notes
    # Naming no cell (the case): kept, and marked a sentence for the warnings.
    item = normalise_item("Chinstrap penguins live in the Galapagos Islands.", cells, question)
    assert item.shape == "sentence" and item.text.startswith("Chinstrap penguins live")
    # Naming two cells the question does not: no single value, kept.
    item = normalise_item("They live on Dream and on Biscoe, both near the pole.", cells, question)
    assert item.shape == "sentence" and "Dream" in item.text
    # A count in a sentence, for a count question.
    item = normalise_item("There are 3 species in the table here.", cells, "how many species?")
    assert (item.text, item.shape) == ("3", "sentence")


def test_a_whole_row_is_reduced_to_the_one_cell_it_names() -> None:
    cells = TableCells(PENGUINS)
    question = "on which island do chinstrap penguins live?"
    for raw in ("Chinstrap | Dream | 46.5", "row 2 : Chinstrap | Dream", "Chinstrap, Dream"):
        item = normalise_item(raw, cells, question)
        assert item.shape == "row", raw
    assert normalise_item("Chinstrap | Dream", cells, question).text == "Dream"
    # A row whose other cells the question does not name either stays a row.
    item = normalise_item("Chinstrap | Dream | 46.5", cells, question)
    assert item.text == "Chinstrap | Dream | 46.5"
    # Two values of different rows are a list answer, not a row.
    assert normalise_item("Dream, Biscoe", cells, "which islands?").shape == "value"


def test_a_cell_with_many_words_is_not_a_sentence() -> None:
    note = "The bird was seen twice on the northern shore of the island."
    cells = TableCells(Table.from_records(["note"], [[note]]))
    assert normalise_item(note, cells, "what note?").shape == "value"


@SETTINGS
@given(st.integers(0, 10**6), st.sampled_from(["days", "day", "rainy days", "years"]),
       st.sampled_from(["", ".", "!"]))  # fmt: skip
def test_a_count_followed_by_what_it_counts_is_the_count(n: int, unit: str, mark: str) -> None:
    question = "how many rainy days or years were there?"
    item = normalise_item(f"{n} {unit}{mark}", None, question)
    assert (item.text, item.shape) == (str(n), "value") and scalar(item.text).value == n


def test_only_what_the_question_counts_is_dropped_after_a_count() -> None:
    cells = TableCells(Table.from_records(["span"], [["15 years"]]))
    assert normalise_item("15 km", None, "how many years?").text == "15 km"
    assert normalise_item("15 years", None, "which years?").text == "15 years"
    assert normalise_item("15 years", cells, "how many years?").text == "15 years"  # a cell
    assert normalise_item("15 years ago today", None, "how many years?").text != "15"
