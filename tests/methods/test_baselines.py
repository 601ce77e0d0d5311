from __future__ import annotations

from collections.abc import Iterator

import pytest

from tablereason.llm import ScriptedLLM
from tablereason.methods.baselines import ProgramOfThought, TextToSQL
from tablereason.sandbox import PythonSandbox, RetrySettings
from tablereason.table import Table


@pytest.fixture(scope="module")
def box() -> Iterator[PythonSandbox]:
    sandbox = PythonSandbox(workers=1)
    yield sandbox
    sandbox.close()


@pytest.fixture
def table() -> Table:
    return Table.from_records(
        ["Day", "Number of cars"], [["Monday", "12"], ["Tuesday", "9"], ["Friday", "15"]]
    )


def test_program_of_thought_retries_until_verified(box: PythonSandbox, table: Table) -> None:
    llm = ScriptedLLM(replies=[
        "```python\nprint('thinking')\n```",
        "```python\ncars = df['Number of cars'].astype(int)\nans = cars.max() - cars.min()\n```",
    ])  # fmt: skip
    prediction = ProgramOfThought(llm, sandbox=box).run(
        table, "What is the range of the numbers?", unit="cars"
    )
    assert prediction.answer == "6" and prediction.error is None
    programs = [s for s in prediction.trace.steps if s.kind == "program"]
    assert len(programs) == 2 and programs[0].error and programs[1].error is None
    assert "(Unit: cars)" in llm.requests[0].prompt
    assert "previous attempt failed" in str(llm.requests[1].prompt)
    assert prediction.trace.steps[-1].kind == "answer"


def test_program_of_thought_paper_settings(box: PythonSandbox, table: Table) -> None:
    llm = ScriptedLLM(replies=["ans = []", "ans = 'Friday'"])
    method = ProgramOfThought(llm, RetrySettings.paper(patience=2), sandbox=box)
    prediction = method.run(table, "Which day had the most cars?", choices=["Monday", "Friday"])
    assert prediction.answer == "Friday"
    assert [r.temperature for r in llm.requests] == [0.0, 0.1]
    assert "previous attempt" not in str(llm.requests[1].prompt)


def test_program_of_thought_never_raises_on_bad_programs(box: PythonSandbox, table: Table) -> None:
    llm = ScriptedLLM(replies=["import os\nans = os.getcwd()"] * 3)
    prediction = ProgramOfThought(llm, sandbox=box).run(table, "Where am I?")
    assert prediction.answer == "" and "not allowed" in str(prediction.error)


def test_text_to_sql_answers_with_result_cells(table: Table) -> None:
    llm = ScriptedLLM(replies=[
        "SELECT * FROM read_csv('/etc/passwd')",
        '```sql\nSELECT "Day" FROM t ORDER BY CAST("Number of cars" AS INT) DESC LIMIT 1;\n```',
    ])  # fmt: skip
    prediction = TextToSQL(llm).run(table, "Which day had the most cars?")
    assert prediction.answer == ["Friday"] and prediction.error is None
    sql_steps = [s for s in prediction.trace.steps if s.kind == "sql"]
    assert "table functions and file paths are not allowed" in str(sql_steps[0].error)
    assert "table functions and file paths are not allowed" in str(llm.requests[1].prompt)


def test_text_to_sql_gives_up_after_patience(table: Table) -> None:
    llm = ScriptedLLM(replies=["DROP TABLE t", "ATTACH 'x'"])
    prediction = TextToSQL(llm, patience=2).run(table, "Break it")
    assert prediction.answer == "" and prediction.error
    assert len(llm.requests) == 2
