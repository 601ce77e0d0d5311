"""The SQL and Python tools over the user's tables: SQL in the worker, Python in the sandbox."""

from __future__ import annotations

import ast
import builtins

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.errors import ConfigurationError
from tablereason.table import Table
from tablereason.tools import TOOLS, PythonTool, SQLTool, ToolContext, build_tools, invoke
from tablereason.tools.python_tool import answer_program, frame
from tablereason.tools.sql_tool import result_text, strip_code

PENGUINS = Table.from_records(
    ["species", "island", "body_mass_g"],
    [
        ["Adelie", "Torgersen", "3750"],
        ["Adelie", "Dream", "3800"],
        ["Gentoo", "Biscoe", "5,000"],
        ["Chinstrap", "Dream", ""],
    ],
)
ISLANDS = Table.from_records(["island", "country"], [["Dream", "AQ"], ["Biscoe", "AQ"]])


# ----------------------------------------------------------------------------- SQL


def test_sql_answers_from_every_row_of_the_table() -> None:
    out = invoke(SQLTool(PENGUINS), "SELECT species, count(*) AS n FROM t GROUP BY 1 ORDER BY 1")
    assert out.ok
    assert out.text.splitlines() == ["species | n", "Adelie | 2", "Chinstrap | 1", "Gentoo | 1"]


def test_sql_reads_number_columns_as_numbers_and_missing_cells_as_null() -> None:
    text = SQLTool(PENGUINS)("SELECT sum(body_mass_g) AS s, count(body_mass_g) AS c FROM t")
    assert text.splitlines() == ["s | c", "12550 | 3"]


@pytest.mark.parametrize(
    "query",
    [
        "DROP TABLE t",
        "SELECT 1; SELECT 2",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM other",
        "COPY t TO '/tmp/x.csv'",
        "ATTACH 'x.db'",
        "SELECT * FROM t, islands",  # a table of another question
    ],
)
def test_sql_refuses_what_is_not_one_select_over_its_tables(query: str) -> None:
    out = invoke(SQLTool(PENGUINS), query)
    assert not out.ok and out.text.startswith("No evidence found: the query failed")


def test_a_failing_query_says_so_once() -> None:
    text = SQLTool(PENGUINS)("SELECT id FROM t")
    assert text.startswith("No evidence found: the query failed: ") and text.count("failed") == 1


def test_sql_over_several_tables_sees_exactly_those() -> None:
    tool = SQLTool({"penguins": PENGUINS, "islands": ISLANDS})
    text = tool(
        "SELECT country, count(*) AS n FROM penguins JOIN islands USING (island) GROUP BY 1"
    )
    assert text.splitlines() == ["country | n", "AQ | 3"]
    assert tool("SELECT * FROM t").startswith("No evidence found")  # the single name is gone
    assert "penguins, islands" in tool.description


def test_sql_result_is_cut_to_its_rows_and_says_so() -> None:
    many = Table.from_records(["n"], [[str(i)] for i in range(50)])
    lines = SQLTool(many, max_rows=5)("SELECT n FROM t").splitlines()
    assert lines[:2] == ["n", "0"] and len(lines) == 7
    assert lines[-1] == "(50 rows; the first 5 shown)"
    assert result_text(["n"], [], 5, False).splitlines() == ["n", "(no rows)"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(-10_000, 10_000), min_size=1, max_size=40))
def test_sql_sums_and_counts_equal_python(values: list[int]) -> None:
    table = Table.from_records(["v"], [[str(v)] for v in values])
    text = SQLTool(table)("SELECT sum(v) AS s, count(*) AS c, max(v) AS m FROM t")
    assert text.splitlines()[1] == f"{sum(values)} | {len(values)} | {max(values)}"


@given(st.text(alphabet="SELECT1 *;\n", max_size=30), st.sampled_from(["sql", "python", ""]))
def test_strip_code_reads_the_same_code_with_or_without_a_fence(text: str, language: str) -> None:
    code = strip_code(f"```{language}\n{text}\n```")
    assert code == strip_code(text) == strip_code(f"`{text.strip()}`") or not text.strip()
    assert not code.endswith(";") and strip_code(code) == code


# -------------------------------------------------------------------------- Python


def test_python_gives_the_value_of_the_last_line_and_what_was_printed() -> None:
    tool = PythonTool(PENGUINS)
    assert tool("(df['species'] == 'Adelie').sum()") == "2"
    assert tool("print(len(df)); df['body_mass_g'].max()") == "4\n5000"
    islands = tool("ans = sorted(df['island'].unique().tolist())")
    assert islands == '["Biscoe", "Dream", "Torgersen"]'


def test_python_runs_in_the_sandbox_never_in_this_process(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("model code reached exec or eval in the caller's process")

    tool = PythonTool(PENGUINS)
    monkeypatch.setattr(builtins, "exec", refuse)
    monkeypatch.setattr(builtins, "eval", refuse)
    assert tool("int(df['body_mass_g'].sum())") == "12550"
    refused = invoke(tool, "import os; os.listdir('/')")
    assert not refused.ok and "import of 'os' is not allowed" in refused.text
    failing = invoke(tool, "df['no such column']")
    assert failing.text.count("failed") == 1
    assert not failing.ok and failing.text.startswith("No evidence found: the program failed")


def test_python_over_several_tables_gets_one_frame_each() -> None:
    tool = PythonTool({"penguins": PENGUINS, "islands": ISLANDS})
    assert tool("len(penguins) * 10 + len(islands)") == "42"
    assert "not defined" in tool("len(df)")


def test_python_frames_are_numbers_where_the_column_is() -> None:
    data = frame(PENGUINS)
    assert data["body_mass_g"].tolist()[:3] == [3750, 3800, 5000]
    assert str(data["species"].dtype) in {"object", "str", "string"}


def test_nothing_to_run_is_said() -> None:
    nothing = PythonTool(PENGUINS)("x = 1")
    assert nothing.startswith("No evidence found: the program printed nothing")
    assert PythonTool(PENGUINS)("```\n```").startswith("No evidence found: the input holds no")


_EXPRESSIONS = st.recursive(
    st.integers(0, 99).map(str) | st.sampled_from(["df", "len(df)", "x"]),
    lambda inner: st.tuples(inner, st.sampled_from(["+", "*", "-"]), inner).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    ),
    max_leaves=6,
)


@given(st.lists(st.sampled_from(["x = 1", "y = [1,\n 2]", "import math", "print(x)"]),
                max_size=3), _EXPRESSIONS, st.sampled_from(["", "  # note", ";"]))  # fmt: skip
def test_answer_program_assigns_exactly_the_last_expression(
    head: list[str], expression: str, tail: str
) -> None:
    code = "\n".join([*head, expression + tail])
    rewritten = ast.parse(answer_program(code))
    last = rewritten.body[-1]
    assert isinstance(last, ast.Assign) and ast.unparse(last.targets[0]) == "ans"
    assert ast.dump(last.value) == ast.dump(ast.parse(expression, mode="eval").body)
    assert [ast.dump(s) for s in rewritten.body[:-1]] == [
        ast.dump(s) for s in ast.parse(code).body[:-1]
    ]


@given(st.sampled_from(["ans = 3", "print(1)", "x = 2", "for i in []: pass", "def f(:"]))
def test_answer_program_leaves_programs_without_a_final_value(code: str) -> None:
    assert answer_program(code) == code


# ----------------------------------------------------------------------- catalog


def test_the_registered_table_tools_need_tables() -> None:
    assert {"sql", "python"} <= set(TOOLS.names())
    sql, python = build_tools(["sql", "python"], ToolContext(tables={"penguins": PENGUINS}))
    assert sql("SELECT count(*) AS n FROM penguins").splitlines() == ["n", "4"]
    assert python("len(penguins)") == "4"
    with pytest.raises(ConfigurationError, match="needs tables"):
        build_tools(["sql"], ToolContext())
    with pytest.raises(ConfigurationError, match="load it first"):
        SQLTool({"x": "a.csv"})  # type: ignore[dict-item]
