"""The one-line Python entry point, with scripted models."""

from __future__ import annotations

import pandas as pd
import pytest
from support.scripted_server import taymyr_reply
from support.taymyr import EXAMPLE, QUESTION

from tablereason.api import ask
from tablereason.errors import ConfigurationError, UnknownNameError
from tablereason.llm import ScriptedLLM
from tablereason.table import Table
from tablereason.trace import Prediction


def scripted() -> ScriptedLLM:
    return ScriptedLLM(fn=lambda request: taymyr_reply(request.as_text()))


def test_ask_a_csv_path_returns_answer_trace_and_tables() -> None:
    llm = scripted()
    prediction = ask(str(EXAMPLE), QUESTION, llm=llm)
    assert isinstance(prediction, Prediction)
    assert prediction.error is None
    assert prediction.answer == ["1985"]
    shapes = [t.shape for t in prediction.tables]
    assert shapes[0] == (21, 8)  # the input table
    assert (1, 8) in shapes and shapes[-1] == (1, 2)  # the row, then the two columns
    assert prediction.tables[-1].columns == ["Column 1", "Live births"]
    assert prediction.tables[-1].rows() == [["1985", "1 104"]]
    assert [s.name for s in prediction.trace.steps if s.kind == "operation"] == [
        "select_row",
        "select_column",
    ]
    # plan, columns, answer: the chain names row 4 itself, but not its columns
    assert len(llm.requests) == 3


def test_ask_a_dataframe_and_a_table_give_the_same_answer() -> None:
    frame = pd.read_csv(EXAMPLE, dtype=str, keep_default_na=False)
    frame.columns = ["", *frame.columns[1:]]
    from_frame = ask(frame, QUESTION, llm=scripted())
    from_table = ask(Table.from_csv(EXAMPLE), QUESTION, llm=scripted())
    assert from_frame.answer == from_table.answer == ["1985"]


def test_options_reach_the_method() -> None:
    llm = ScriptedLLM(fn=lambda request: " yes" if "answer" in request.as_text()[-30:] else "<END>")
    prediction = ask(EXAMPLE, "births exceeded 1000 in 1985", llm=llm, task="tabfact")
    assert prediction.answer == "yes"
    assert prediction.trace.method == "chain_of_table/efficient"
    paper = ask(EXAMPLE, QUESTION, llm=ScriptedLLM(fn=lambda r: "<END>"), profile="paper")
    assert paper.trace.method == "chain_of_table/paper"


def test_a_failing_model_gives_a_prediction_with_an_error() -> None:
    llm = ScriptedLLM(replies=[])  # runs out at once: an LLMError inside the method
    prediction = ask(EXAMPLE, QUESTION, llm=llm)
    assert prediction.error and "ran out of replies" in prediction.error
    assert prediction.answer == []


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ConfigurationError, match="question is empty"):
        ask(EXAMPLE, "  ", llm=scripted())
    with pytest.raises(UnknownNameError, match="did you mean 'chain_of_table'"):
        ask(EXAMPLE, QUESTION, method="chain_of_tabel", llm=scripted())
    with pytest.raises(ConfigurationError, match="invalid Chain-of-Table settings"):
        ask(EXAMPLE, QUESTION, llm=scripted(), no_such_setting=1)


def test_model_spec_string_builds_an_openai_compatible_backend(taymyr_server) -> None:
    prediction = ask(EXAMPLE, QUESTION, llm="fake-model")
    assert prediction.answer == ["1985"]
    assert taymyr_server.counts.replies == 3
    assert {b["model"] for b in taymyr_server.bodies} == {"fake-model"}
