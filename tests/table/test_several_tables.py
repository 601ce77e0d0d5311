"""Questions over several named tables: TableSet, ask, text_to_sql joins in the SQL worker
(which holds only the named tables), program_of_thought with one DataFrame per table, and
Chain-of-Table's refusal."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import tablereason as tr
from tablereason.errors import ConfigurationError, SQLError
from tablereason.llm import Request, ScriptedLLM
from tablereason.sandbox import run_sql
from tablereason.table import Table
from tablereason.table.named import TableSet

FLIGHTS = Table.from_records(
    ["carrier", "dep_delay", "tailnum", "day"],
    [
        ["UA", "5", "N1", "2013-01-01"],
        ["AA", "", "", "2013-01-01"],
        ["UA", "12", "N2", "2013-01-02"],
        ["DL", "-3", "", "2013-01-03"],
    ],
)
AIRLINES = Table.from_records(
    ["carrier", "name"], [["UA", "United Air Lines Inc."], ["AA", "American Airlines Inc."]]
)
SECRET = Table.from_records(["s"], [["the secret cell"]])


def test_a_table_set_checks_its_names() -> None:
    tables = TableSet({"flights": FLIGHTS, "airlines": AIRLINES})
    assert list(tables) == ["flights", "airlines"] and len(tables) == 2
    assert 'Columns of flights: "carrier" text, "dep_delay" integer' in tables.describe()
    for bad in ({}, {"1x": FLIGHTS}, {"a b": FLIGHTS}, {"class": FLIGHTS}):
        with pytest.raises(ConfigurationError):
            TableSet(bad)
    with pytest.raises(ConfigurationError, match="differ only in case"):
        TableSet({"f": FLIGHTS, "F": AIRLINES})
    with pytest.raises(ConfigurationError, match="load it first"):
        TableSet({"f": pd.DataFrame({"a": [1]})})  # type: ignore[dict-item]


def test_run_sql_joins_typed_tables_and_sees_no_other() -> None:
    tables = {"flights": FLIGHTS, "airlines": AIRLINES}
    result = run_sql(
        tables,
        "SELECT a.name, count(*) AS n, max(f.dep_delay) AS worst, count(f.tailnum) AS tails "
        "FROM flights AS f JOIN airlines AS a ON f.carrier = a.carrier "
        "GROUP BY a.name ORDER BY n DESC",
    )
    assert result.rows == [
        ("United Air Lines Inc.", 2, 12, 2),
        ("American Airlines Inc.", 1, None, 0),
    ]
    for query in (
        "SELECT * FROM secret",
        "SELECT * FROM t",
        'SELECT * FROM "__cells_flights"',
        "SELECT * FROM duckdb_tables()",
    ):
        with pytest.raises(SQLError):
            run_sql(tables, query)


def _scripted(reply: str) -> tuple[ScriptedLLM, list[str]]:
    prompts: list[str] = []

    def answer(request: Request) -> str:
        prompts.append(request.as_text())
        return reply

    return ScriptedLLM(fn=answer), prompts


def test_text_to_sql_answers_a_join(tmp_path: Path) -> None:
    airlines = tmp_path / "airlines.csv"
    airlines.write_text("carrier,name\nUA,United Air Lines Inc.\nAA,American Airlines Inc.\n")
    llm, prompts = _scripted(
        " a.name FROM flights AS f JOIN airlines AS a USING (carrier) WHERE f.tailnum IS NULL;"
    )
    prediction = tr.ask(
        {"flights": FLIGHTS, "airlines": str(airlines)},
        "which airline flew a plane with no tail number?",
        method="text_to_sql",
        llm=llm,
    )
    assert prediction.error is None and prediction.answer == ["American Airlines Inc."]
    assert "Table flights (4 rows):" in prompts[0] and "Table airlines (2 rows):" in prompts[0]
    assert '"dep_delay" integer' in prompts[0] and "SECRET" not in prompts[0]


def test_text_to_sql_cannot_reach_a_table_it_was_not_given() -> None:
    llm, _ = _scripted(" s FROM secret;")
    prediction = tr.ask(
        {"flights": FLIGHTS, "airlines": AIRLINES}, "what is the secret?", method="text_to_sql",
        llm=llm,
    )  # fmt: skip
    assert prediction.answer == "" and prediction.error
    assert "the secret cell" not in repr(prediction.trace.to_dict())


def test_program_of_thought_gets_one_frame_per_table() -> None:
    program = (
        "import pandas as pd\n"
        "joined = flights.merge(airlines, on='carrier')\n"
        "delay = pd.to_numeric(joined['dep_delay'], errors='coerce')\n"
        "ans = joined.loc[delay.idxmax(), 'name']\n"
        "```"
    )
    llm, prompts = _scripted(program)
    prediction = tr.ask(
        {"flights": FLIGHTS, "airlines": AIRLINES},
        "which airline had the longest delay?",
        method="program_of_thought",
        llm=llm,
    )
    assert prediction.error is None, prediction.error
    assert prediction.answer == "United Air Lines Inc."
    assert "Each table is a pandas DataFrame named as the table is" in prompts[0]


def test_chain_of_table_says_which_methods_take_several_tables() -> None:
    llm, _ = _scripted("")
    with pytest.raises(ConfigurationError) as refused:
        tr.ask({"flights": FLIGHTS, "airlines": AIRLINES}, "how many?", llm=llm)
    message = str(refused.value)
    assert "chain_of_table answers over one table" in message
    assert "program_of_thought, text_to_sql" in message


def test_the_command_line_takes_named_tables(tmp_path: Path, capsys) -> None:
    from tablereason.cli import EXIT_USAGE, main

    flights = tmp_path / "flights.csv"
    flights.write_text("carrier,dep_delay\nUA,5\n")
    airlines = tmp_path / "airlines.csv"
    airlines.write_text("carrier,name\nUA,United\n")
    argv = ["ask", "--table", f"flights={flights}", "--table", f"airlines={airlines}", "which?"]
    assert main([*argv, "--offline", "--cache", str(tmp_path / "c.sqlite")]) == EXIT_USAGE
    assert "text_to_sql" in capsys.readouterr().err  # chain_of_table refuses, naming them
