from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.errors import ConfigurationError
from tablereason.llm import ScriptedLLM
from tablereason.methods.baselines import ProgramOfThought, TextToSQL
from tablereason.methods.baselines.code_text import verdict_text
from tablereason.prompts.render import render
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
    assert "The last code did not work" in str(llm.requests[1].prompt)
    assert prediction.trace.steps[-1].kind == "answer"


def test_program_of_thought_paper_settings(box: PythonSandbox, table: Table) -> None:
    llm = ScriptedLLM(replies=["ans = []", "ans = 'Friday'"])
    method = ProgramOfThought(llm, RetrySettings.paper(patience=2), sandbox=box)
    prediction = method.run(table, "Which day had the most cars?", choices=["Monday", "Friday"])
    assert prediction.answer == "Friday"
    assert [r.temperature for r in llm.requests] == [0.0, 0.1]
    assert "The last code did not work" not in str(llm.requests[1].prompt)


@pytest.mark.parametrize("temperature", [None, 0.7])
def test_program_of_thought_records_the_temperature_each_program_was_sent_with(
    box: PythonSandbox, table: Table, temperature: float | None
) -> None:
    llm = ScriptedLLM(replies=["ans = []", "ans = undefined", "ans = 'Friday'"])
    method = ProgramOfThought(llm, sandbox=box, temperature=temperature, seed=1)
    prediction = method.run(table, "Which day had the most cars?")
    sent = [r.temperature for r in llm.requests]
    assert sent == ([0.0, 0.3, 0.6] if temperature is None else [0.7] * 3)
    programs = [s for s in prediction.trace.steps if s.kind == "program"]
    assert [s.arguments["temperature"] for s in programs] == sent


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


def test_text_to_sql_repair_asks_for_sql_again_not_for_comments(table: Table) -> None:
    # the reply a small model gave to the old repair prompt: the feedback echoed as comments
    echo = "# The previous attempt failed: the SQL does not parse\n# Write a corrected version.\n"
    llm = ScriptedLLM(replies=[
        echo,
        ' "Day" FROM t ORDER BY CAST("Number of cars" AS INT) DESC LIMIT 1',
    ])  # fmt: skip
    prediction = TextToSQL(llm).run(table, "Which day had the most cars?")
    assert prediction.answer == ["Friday"] and prediction.error is None
    first, repair = (str(r.prompt) for r in llm.requests)
    assert first.endswith("SQL: SELECT") and repair.endswith("SQL: SELECT")
    assert "\nError: " in repair and not repair.rstrip().split("\n")[-1].startswith("#")
    steps = [s for s in prediction.trace.steps if s.kind == "sql"]
    assert steps[1].arguments["query"].startswith('SELECT "Day" FROM t')
    assert all(r.stop and "\n\n" in r.stop for r in llm.requests)


def test_text_to_sql_reads_the_query_out_of_a_chatty_reply(table: Table) -> None:
    reply = (
        "Sure! I will select the day with nine cars.\n# the query\n"
        'SELECT "Day" FROM t WHERE "Number of cars" = \'9\'; -- Tuesday\n'
        "This returns Tuesday."
    )
    llm = ScriptedLLM(replies=[reply])
    prediction = TextToSQL(llm).run(table, "Which day had 9 cars?")
    assert prediction.answer == ["Tuesday"] and len(llm.requests) == 1


def test_text_to_sql_refuses_a_reply_of_two_queries_and_asks_again(table: Table) -> None:
    """A second statement is not cut away (it could be what the first was part of)."""
    first = 'SELECT "Day" FROM t WHERE "Number of cars" = \'9\'; -- Tuesday\nSELECT "Day" FROM t'
    llm = ScriptedLLM(replies=[first, '"Day" FROM t WHERE "Number of cars" = \'9\''])
    prediction = TextToSQL(llm).run(table, "Which day had 9 cars?")
    assert prediction.answer == ["Tuesday"] and len(llm.requests) == 2
    refused = next(s for s in prediction.trace.steps if s.kind == "sql")
    assert refused.error and "exactly one SELECT" in refused.error


def test_text_to_sql_prompt_quotes_every_column_name() -> None:
    table = Table.from_records(['say "hi"', "Date of birth"], [["a", "b"]])
    prompt = TextToSQL(ScriptedLLM(replies=[])).prompt(table, "q?")
    assert 'Columns: "say ""hi""", "Date of birth"\nQuestion: q?\nSQL: SELECT' in prompt


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(replies=st.lists(st.text(max_size=120), min_size=3, max_size=3))
def test_text_to_sql_never_raises_on_a_bad_reply(replies: list[str], table: Table) -> None:
    prediction = TextToSQL(ScriptedLLM(replies=replies)).run(table, "Which day?")
    sql_steps = [s for s in prediction.trace.steps if s.kind == "sql"]
    assert sql_steps and (prediction.error is None) == bool(prediction.answer)
    assert all(s.error for s in sql_steps[:-1])


def test_program_of_thought_prompt_ends_inside_a_python_fence(
    box: PythonSandbox, table: Table
) -> None:
    comments = "# Python Code, return 'ans'. Make sure that 'ans' is a number\n# df is the table"
    llm = ScriptedLLM(replies=[
        comments,
        "cars = df['Number of cars'].astype(int)\nprint(cars.max())\n```\nThis prints the top.",
    ])  # fmt: skip
    prediction = ProgramOfThought(llm, sandbox=box).run(table, "What is the most cars?")
    assert prediction.answer == "15" and prediction.error is None
    first, repair = (str(r.prompt) for r in llm.requests)
    assert first.endswith("```python\n") and repair.endswith("```python\n")
    assert "The last code did not work: the program must assign" in repair
    assert all(r.stop == ("\n```",) for r in llm.requests)
    programs = [s for s in prediction.trace.steps if s.kind == "program"]
    assert programs[1].arguments["program"].endswith("ans = cars.max()")


def test_text_to_sql_runs_against_the_column_names_the_prompt_shows() -> None:
    table = Table.from_records(["Level\ncm", "Level cm", "Year"], [["421", "5", "1825"]])
    llm = ScriptedLLM(
        replies=[' "Year" FROM t WHERE "Level cm (2)" = \'5\' AND "Level cm" = \'421\'']
    )
    method = TextToSQL(llm)
    assert 'Columns: "Level cm", "Level cm (2)", "Year"\n' in method.prompt(table, "q?")
    assert method.run(table, "When?").answer == ["1825"]


def test_program_of_thought_df_has_the_column_names_the_prompt_shows(box: PythonSandbox) -> None:
    table = Table.from_records(["Level\ncm", "Year"], [["421", "1825"]])
    llm = ScriptedLLM(replies=['ans = df.loc[df["Level cm"] == "421", "Year"].iloc[0]'])
    prediction = ProgramOfThought(llm, sandbox=box).run(table, "When?")
    assert "col : Level cm | Year" in str(llm.requests[0].prompt)
    assert prediction.answer == "1825" and prediction.error is None


def test_program_of_thought_prompt_lists_the_columns_of_df() -> None:
    table = Table.from_records(['say "hi"', "Level\ncm"], [["a", "b"]])
    prompt = ProgramOfThought(ScriptedLLM(replies=[])).prompt(table, "q?")
    assert 'Columns of df: "say \\"hi\\"", "Level cm"\nQuestion: q?\n```python\n' in prompt


def _demos(prompt: str) -> list[tuple[Table, str]]:
    """The demo tables and programs of a Program-of-Thought prompt."""
    found = []
    for block in prompt.split("\n\nTable:\n")[1:]:
        code = block.split("```python\n", 1)[1]
        if not code.strip():  # the question's own block: its fence is still open
            continue
        lines = block.split("\n")
        header = [c.strip() for c in lines[0].removeprefix("col : ").split(" | ")]
        rows = [[c.strip() for c in line.split(" : ", 1)[1].split(" | ")]
                for line in lines if line.startswith("row ")]  # fmt: skip
        found.append((Table.from_records(header, rows), code.split("\n```", 1)[0]))
    return found


def test_program_of_thought_checks_a_tabfact_statement_and_answers_a_verdict(
    box: PythonSandbox, table: Table
) -> None:
    llm = ScriptedLLM(replies=[
        "ans = cars", 'ans = bool(df["Number of cars"].astype(int).max() > 14)',
    ])  # fmt: skip
    method = ProgramOfThought(llm, sandbox=box, task="tabfact")
    assert method.config()["task"] == "tabfact"
    prediction = method.run(table, "friday had more than 14 cars")
    assert prediction.answer == "yes" and prediction.error is None
    prompt = llm.requests[0].as_text()
    assert "Statement: friday had more than 14 cars\n```python\n" in prompt
    assert "True if the table supports the statement" in prompt and "Question:" not in prompt
    # a value that is no verdict is kept as it is (the metric scores it wrong)
    kept = ProgramOfThought(ScriptedLLM(replies=["ans = 12"]), sandbox=box, task="tabfact")
    assert kept.run(table, "there were 12 cars").answer == "12"
    open_question = ProgramOfThought(ScriptedLLM(replies=[])).prompt(table, "how many?")
    assert open_question.count("Question:") == 4


def test_program_of_thought_refuses_a_task_without_tables() -> None:
    with pytest.raises(ConfigurationError, match="task 'hotpotqa' is not one of"):
        ProgramOfThought(ScriptedLLM(replies=[]), task="hotpotqa")


@pytest.mark.parametrize(("template", "expected"), [
    ("baselines/program_of_thought_tabfact", [False, True, False]),
    ("baselines/program_of_thought", ["Millbrook 27", "2007", 3]),
])  # fmt: skip
def test_every_program_of_thought_demo_runs_on_its_table_to_its_answer(
    box: PythonSandbox, template: str, expected: list[object]
) -> None:
    blanks = dict.fromkeys(["regarding", "table", "columns", "question", "repair"], "")
    if template == "baselines/program_of_thought":
        blanks["kind"] = ""
    prompt = render(template, **blanks)
    demos = _demos(prompt)
    assert len(demos) == len(expected)
    for (demo, code), answer in zip(demos, expected, strict=True):
        result = box.run(code, {"df": demo.to_pandas()})
        assert result.error is None and result.value == answer, code


@given(st.sampled_from([True, False, "True", "false", " YES ", "no", ["yes"], [False]]))
def test_verdict_text_reads_every_spelling_of_a_verdict(value: object) -> None:
    truthy = value in (True, "True", " YES ", ["yes"])
    assert verdict_text(value) == ("yes" if truthy else "no")
