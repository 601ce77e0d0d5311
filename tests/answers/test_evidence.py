"""Evidence: the input cells an answer rests on, for every method and both table paths."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest
from answer_helpers import WEATHER, cells, chain_llm, codes, run_chain

from tablereason import Table
from tablereason.answers.assess import assess
from tablereason.answers.records import KIND_TEXT
from tablereason.llm import ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.methods.baselines import ProgramOfThought, TextToSQL
from tablereason.table import storage
from tablereason.trace import Prediction, Trace, TraceStep

SNOW = [(1, "weather"), (3, "weather"), (5, "weather")]


@contextmanager
def duckdb_only() -> Iterator[None]:
    """Every table counts as large: operations and cell searches run in DuckDB."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "SMALL_CELLS", 0)
        yield


CHAINS = [
    # question, chain, answer, sort reply, the evidence cells
    ("how many days had snow?", " f_select_row(where weather = 'snow') -> <END>", " 3", "",
     SNOW),
    ("which weather was the most common?", " f_group_column(weather) -> <END>", " snow", "",
     SNOW),
    ("how many days were rainy?", " f_group_column(weather) -> <END>", " 2", "",
     [(0, "weather"), (4, "weather")]),
    ("what was the total mm on snow days?", " f_select_row(where weather = 'snow') -> <END>",
     " 9.4", "", [(1, "mm"), (3, "mm"), (5, "mm")]),
    ("what was the highest wind?", " f_select_column(date, wind) -> <END>", " 6.1", "",
     [(4, "wind")]),
    ("on which day was the wind strongest?", " f_sort_column(wind) -> <END>", " 2013-01-05",
     'wind), the order is "large to small".', [(4, "date")]),
    ("how many snow days were there in 2013?",
     " f_add_column(y = year(date)) -> f_select_row(where y = 2013 AND weather = 'snow') -> <END>",
     " 2", "", [(3, "date"), (3, "weather"), (5, "date"), (5, "weather")]),
]  # fmt: skip


@pytest.mark.parametrize("large", [False, True], ids=["python", "duckdb"])
@pytest.mark.parametrize(("question", "plan", "answer", "sort", "want"), CHAINS)
def test_a_right_chain_cites_the_cells_it_rests_on(
    question: str, plan: str, answer: str, sort: str, want: list[tuple[int, str]], large: bool
) -> None:
    with duckdb_only() if large else contextlib_nothing():
        table = Table.from_records(WEATHER.columns, WEATHER.rows(), caption=WEATHER.caption)
        prediction = run_chain(table, question, plan, answer, large=True, sort_column=sort)
    assert prediction.error is None, prediction.error
    assert prediction.evidence is not None and prediction.evidence.status == "found"
    assert prediction.evidence.basis == "lineage"
    assert cells(prediction) == want
    assert codes(prediction) == []  # a right chain raises no warning
    for cell in prediction.evidence.cells:
        assert cell.value == WEATHER.rows()[cell.row][WEATHER.columns.index(cell.column)]


@contextmanager
def contextlib_nothing() -> Iterator[None]:
    yield


def test_the_small_table_chain_cites_the_cell_through_its_selections() -> None:
    prediction = run_chain(
        WEATHER,
        "what was the weather on 2012-01-03?",
        " f_select_row(row 3) -> f_select_column(date, weather) -> <END>",
        " sun",
    )
    assert cells(prediction) == [(2, "weather")]
    # Marked in the input table and in each table after it (step index: cells).
    marks = prediction.evidence.marks if prediction.evidence else {}
    assert marks[0] == [(2, "weather")] and marks[max(marks)] == [(0, "weather")]


def test_a_count_of_rows_no_condition_chose_cites_the_rows_cells() -> None:
    prediction = run_chain(
        WEATHER,
        "how many rainy days are listed?",
        " f_select_row(row 1, row 5) -> f_select_column(weather) -> <END>",
        " 2",
    )
    assert cells(prediction) == [(0, "weather"), (4, "weather")]
    assert prediction.evidence and "count" in prediction.evidence.how


def test_a_count_over_500000_rows_is_exact_and_lists_the_first_cells() -> None:
    n = 500_000
    frame = pd.DataFrame({"kind": np.where(np.arange(n) % 2 == 0, "even", "odd")}, dtype=object)
    frame["n"] = np.arange(n).astype(str)
    table = Table.from_pandas(frame)
    plan = " f_select_row(where kind = 'odd') -> <END>"
    prediction = ChainOfTable(chain_llm(plan, " 250000"), task="wikitq").run(table, "how many odd?")
    assert prediction.evidence is not None
    assert prediction.evidence.total == 250_000 and len(prediction.evidence.cells) == 50
    assert [c.row for c in prediction.evidence.cells[:3]] == [1, 3, 5]
    assert codes(prediction) == []


def test_text_to_sql_carries_row_numbers_through_its_query() -> None:
    queries = [
        "weather, count(*) AS n FROM t GROUP BY weather ORDER BY n DESC, weather LIMIT 1",
        "count(*) FROM t WHERE weather = 'snow'",
        "date FROM t WHERE weather = 'rain' ORDER BY CAST(mm AS DOUBLE) DESC LIMIT 1",
        "max(CAST(wind AS DOUBLE)) FROM t",
        "a.date FROM t AS a JOIN t AS b ON a.date = b.date LIMIT 1",
    ]
    found = []
    for query in queries:
        prediction = TextToSQL(ScriptedLLM(replies=[" " + query])).run(WEATHER, "q?")
        assert prediction.error is None, prediction.error
        assert prediction.evidence is not None
        found.append((prediction.answer, prediction.evidence.basis, cells(prediction)))
    assert found[0] == (["snow"], "query", SNOW)
    assert found[1] == (["3"], "query", SNOW)  # count(*): the cells its condition reads
    assert found[2] == (["2012-01-01"], "query", [(0, "date")])
    assert found[3] == (["6.1"], "query", [(4, "wind")])  # a max: the cell that is it
    assert found[4][1] == "none" and found[4][2] == []
    joined = TextToSQL(ScriptedLLM(replies=[" " + queries[4]])).run(WEATHER, "q?")
    assert joined.evidence and joined.evidence.status == "not_available"
    assert "joins tables" in joined.evidence.how


def test_a_program_answer_is_matched_against_the_input_table() -> None:
    sun = "```python\nans = df[df['weather'] == 'sun']['date'].iloc[0]\n```"
    total = "```python\nans = round(sum(float(x or 0) for x in df['mm']), 1)\n```"
    found = ProgramOfThought(ScriptedLLM(replies=[sun])).run(WEATHER, "which day was sunny?")
    assert found.answer == "2012-01-03" and cells(found) == [(2, "date")]
    assert found.evidence and found.evidence.basis == "match"
    computed = ProgramOfThought(ScriptedLLM(replies=[total])).run(WEATHER, "total mm?")
    assert computed.answer == "22.8"
    assert computed.evidence and computed.evidence.status == "not_available"
    assert "not traced" in computed.evidence.how


def test_a_run_without_a_table_has_no_evidence_and_says_why() -> None:
    prediction = Prediction(answer="Paris", trace=Trace(question="capital of France?"))
    assert prediction.evidence is not None and prediction.evidence.status == "not_available"
    assert prediction.evidence.how == "the run read no table"
    assert prediction.value and prediction.value.value == "Paris"


def test_a_run_over_a_lowercased_copy_cites_the_users_cells() -> None:
    from tablereason.api import ask

    llm = chain_llm(" f_select_row(row 2) -> <END>", "snow")
    prediction = ask(WEATHER, "what was the weather on 2012-01-02?", llm=llm, profile="paper")
    first = prediction.trace.steps[0].table
    assert first is not WEATHER and first.rows()[0][1] == "rain"  # the paper's lower-cased copy
    assert prediction.evidence and prediction.evidence.cells
    assert all(c.column in WEATHER.columns for c in prediction.evidence.cells)


def test_a_saved_trace_replays_its_tables_with_their_lineage() -> None:
    prediction = run_chain(
        WEATHER, "how many days had snow?", " f_select_row(where weather = 'snow') -> <END>", " 3",
        large=True,
    )  # fmt: skip
    saved = Trace.from_dict(prediction.trace.to_dict())
    final = saved.tables[-1]
    assert final.rows() == prediction.tables[-1].rows()
    assert [s.operation for s in final.steps()] == ["filter_rows"]
    assert final.provenance(0, "date").cells[0].row == 1
    again = Prediction(answer=prediction.answer, trace=saved)
    assert again.evidence == prediction.evidence and again.warnings == []


SNOW_CHAIN = " f_select_row(where weather = 'snow') -> <END>"


def test_checks_given_explicitly_are_kept() -> None:
    checked = run_chain(WEATHER, "how many days had snow?", SNOW_CHAIN, " 3", large=True)
    given = {k: getattr(checked, k) for k in ("value", "evidence")}
    copy = Prediction(answer="3", **given, warnings=[])  # no trace: it would find nothing
    assert copy.evidence == checked.evidence


def test_the_assessment_keeps_every_position() -> None:
    prediction = run_chain(WEATHER, "how many days had snow?", SNOW_CHAIN, " 3", large=True)
    found = assess(prediction)
    assert {c: p.tolist() for c, p in found.positions.items()} == {"weather": [1, 3, 5]}


def test_a_trace_step_table_without_lineage_still_checks() -> None:
    table = Table.from_records(["a"], [["x"], ["y"]])
    trace = Trace(question="which?", steps=[TraceStep(kind="input", name="table", table=table)])
    prediction = Prediction(answer="y", trace=trace)
    assert cells(prediction) == [(1, "a")]


@pytest.mark.parametrize(
    ("question", "answer", "kind"),
    [
        ("how many places are listed at most?", " 3", "count"),  # 1..6 average 3.5
        ("what is the average place?", " 3.5", "mean"),
        ("what is the total of the places?", " 21", "sum"),
    ],
)
def test_a_count_answer_is_never_read_as_an_average(question: str, answer: str, kind: str) -> None:
    table = Table.from_records(["place", "rider"], [[str(i), f"r{i}"] for i in range(1, 7)])
    prediction = run_chain(table, question, " <END>", answer)
    assert prediction.evidence is not None
    if kind == "count":  # the one cell equal to 3, not the six places its average is near
        assert cells(prediction) == [(2, "place")]
        assert "average" not in prediction.evidence.how
    else:
        assert cells(prediction) == [(i, "place") for i in range(6)]
        assert KIND_TEXT[kind] in prediction.evidence.how
