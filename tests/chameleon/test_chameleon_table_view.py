"""Chameleon on the user's own table: a bounded view for a large table, programs given it as df."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.chameleon_replies import routed
from support.penguins import QUESTION, adelie_count, penguin_rows, penguin_table

from tablereason.api import ask
from tablereason.methods.chameleon import Chameleon
from tablereason.methods.chameleon.table_view import fits, program_inputs, shown, table_text
from tablereason.table import Table

N_CTX = 8192
"""The embedded model's default context, in tokens."""
PLAN = (
    '["row_lookup", "column_lookup", "table_verbalizer", "knowledge_retrieval", '
    '"program_generator", "program_verifier", "program_executor", "answer_generator"]'
)
PROGRAM = "ans = int((df['species'] == 'Adelie').sum())"


def token_bound(prompt: str) -> int:
    """An upper bound on a prompt's tokens for a byte-level tokenizer (every token >= 1 byte)."""
    return len(prompt.encode("utf-8")) + 2  # and the start-of-text tokens


def every_module() -> object:
    return routed(
        planner=[PLAN], row_lookup=["all"], column_lookup=["all"],
        table_verbalizer=["A table of penguins."], knowledge_retrieval=["- Adelie is a species."],
        program_generator_and_verifier=[PROGRAM],
    )  # fmt: skip


def test_a_344_row_table_is_answered_within_the_context(box) -> None:
    llm = every_module()
    method = Chameleon(llm, task="wikitq", sandbox=box)
    prediction = method.run(penguin_table(), QUESTION)
    assert prediction.error is None, prediction.error
    assert prediction.answer == str(adelie_count())  # the program read all 344 rows as df
    sites = [r.call_site.removeprefix("chameleon/") for r in llm.requests]
    assert sites == [
        "planner", "row_lookup", "column_lookup", "table_verbalizer", "knowledge_retrieval",
        "program_generator_and_verifier",
    ]  # fmt: skip
    for request in llm.requests:
        prompt = request.as_text()
        assert token_bound(prompt) + (request.max_tokens or 0) <= N_CTX, request.call_site
        assert "rows : 344" in prompt and "pandas DataFrame df" in prompt


def test_without_the_bound_the_same_table_overflows_the_context() -> None:
    llm = routed(planner=[PLAN])
    Chameleon(llm, task="wikitq", view_rows=None).run(penguin_table(), QUESTION)
    assert token_bound(llm.requests[0].as_text()) > N_CTX  # what the bound prevents


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(31, 4000))
def test_the_shown_table_has_a_bounded_size_whatever_its_rows(rows: int) -> None:
    table = penguin_table(rows)
    text = shown(table, QUESTION, 30)
    assert len(text.splitlines()) <= 30 + 3  # rows, col and closing lines
    assert len(text) < 3000
    assert f"The table has {rows} rows" in text


def test_a_table_that_fits_is_shown_whole_and_programs_get_no_frame() -> None:
    small = penguin_table(29)  # 29 rows and the header: 30 lines
    assert fits(small, 30) and shown(small, QUESTION, 30) == table_text(small)
    assert program_inputs(small, 30) is None
    frame = program_inputs(penguin_table(30), 30)
    assert frame is not None and len(frame["df"]) == 30
    assert fits(penguin_table(4000), None)  # no bound: shown whole, as published


def test_row_lookup_on_a_large_table_names_rows_of_the_whole_table(box) -> None:
    rows = penguin_rows()
    llm = routed(
        planner=['["row_lookup", "program_generator", "program_executor", "answer_generator"]'],
        row_lookup=["row 2, row 300"], program_generator=["ans = len(df) if 'df' in dir() else 2"],
    )  # fmt: skip
    prediction = Chameleon(llm, task="wikitq", sandbox=box).run(penguin_table(), "which two?")
    kept = next(s for s in prediction.trace.steps if s.name == "row_lookup")
    assert kept.arguments["rows"] == [1, 299]
    assert kept.table is not None and kept.table.rows() == [rows[1], rows[299]]
    program_prompt = llm.requests[-1].as_text()
    assert " | ".join(rows[299]) in program_prompt  # the two rows, shown whole
    assert "pandas DataFrame df" not in program_prompt
    assert prediction.answer == "2"


def test_wikitq_is_a_users_table_question_through_ask(box) -> None:
    method = Chameleon(routed(), task="wikitq")
    assert method.task == "tabmwp" and method.config()["asked_task"] == "wikitq"
    llm = routed(planner=['["program_generator", "program_executor", "answer_generator"]'],
                 program_generator=[PROGRAM])  # fmt: skip
    prediction = ask(penguin_table(), QUESTION, method="chameleon", llm=llm, sandbox=box)
    assert prediction.error is None and prediction.answer == str(adelie_count())


def test_tabmwp_tables_are_shown_as_published(tabmwp_examples) -> None:
    for example in tabmwp_examples.values():
        table = example.table
        assert isinstance(table, Table)
        assert shown(table, example.question, 30) == table_text(table)
