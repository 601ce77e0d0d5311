"""ReAct over the user's own tables: a bounded view, SQL in the worker and Python in the sandbox."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.penguins import QUESTION, check_counted_by_both_tools, penguin_table

from tablereason.errors import ConfigurationError
from tablereason.llm import Capabilities, ScriptedLLM, satisfies
from tablereason.methods.constraints.tools import react_action
from tablereason.methods.react import ReAct, parse_action
from tablereason.table import Table

ISLANDS = Table.from_records(["island", "country"], [["Dream", "AQ"], ["Biscoe", "AQ"]])
SQL_COUNT = "SELECT count(*) AS n FROM t WHERE species = 'Adelie'"
PY_COUNT = "int((df['species'] == 'Adelie').sum())"


class Enforcing(ScriptedLLM):
    """A scripted model that claims to enforce grammars."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(constraints=frozenset({"grammar"}), after=True)


def last_observation(prompt: str) -> str:
    return re.findall(r"Observation: (.*)", prompt)[-1]


def agent_reply(request) -> str:
    """SQL first, then Python, then the Python tool's own result as the answer."""
    prompt = request.as_text()
    asked = prompt[prompt.rindex(f"Question: {QUESTION}") :]
    steps = asked.count("\nObservation: ")
    if steps == 0:
        return f" I count the rows with SQL.\nAction: SQL[{SQL_COUNT}]"
    if steps == 1:
        return f" I check it with Python.\nAction: Python[{PY_COUNT}]"
    return f" Both agree.\nAction: Finish[{last_observation(asked)}]"


def test_react_answers_over_a_344_row_table_with_both_tools() -> None:
    table = penguin_table()
    llm = ScriptedLLM(fn=agent_reply)
    prediction = ReAct(llm, task="wikitq").run(table, QUESTION)
    check_counted_by_both_tools(prediction, table)
    first = llm.requests[0].as_text()
    view = first[first.rindex("Table t (t in SQL, df in Python):") :]
    assert "rows : 344" in view
    shown = [line for line in view.splitlines() if line.startswith(("row ", "column "))]
    assert len(shown) <= ReAct(llm, task="wikitq").settings.view_rows
    assert "SQL[input]:" in first and "Python[input]:" in first


def test_the_view_stays_bounded_whatever_the_number_of_rows() -> None:
    lengths = []
    for count in (40, 344, 3000):
        llm = ScriptedLLM(replies=[" stop\nAction: Finish[x]"])
        ReAct(llm, task="wikitq").run(penguin_table(count), QUESTION)
        lengths.append(len(llm.requests[0].as_text()))
    assert max(lengths) - min(lengths) < 200  # a few digits and cells differ, no rows added


def test_react_takes_several_tables_and_its_tools_see_exactly_those() -> None:
    tables = {"penguins": penguin_table(50), "islands": ISLANDS}
    replies = [
        " join\nAction: SQL[SELECT count(*) AS n FROM penguins JOIN islands USING (island)]",
        " a table of nobody\nAction: SQL[SELECT count(*) FROM t]",
        " python\nAction: Python[len(penguins) + len(islands)]",
        " done\nAction: Finish[52]",
    ]
    llm = ScriptedLLM(replies=replies)
    prediction = ReAct(llm, task="wikitq").run(tables, "how many rows in all?")
    assert prediction.answer == "52"
    observations = [s.raw[0] for s in prediction.trace.steps if s.kind == "tool"]
    joined = sum(1 for row in penguin_table(50).rows() if row[1] in {"Dream", "Biscoe"})
    assert observations[0] == f"n\n{joined}"
    assert observations[1].startswith("No evidence found: the query failed")
    assert "may read only: islands, penguins" in observations[1]
    assert observations[2] == "52"
    prompt = llm.requests[0].as_text()
    assert "Table penguins (penguins in SQL and Python):" in prompt
    assert "Table islands (islands in SQL and Python):" in prompt


def test_an_unknown_tool_is_an_observation_naming_the_known_ones() -> None:
    llm = ScriptedLLM(replies=[" hm\nAction: Pandas[df.head()]", " ok\nAction: Finish[3]"])
    prediction = ReAct(llm, task="wikitq").run(penguin_table(10), "how many?")
    assert prediction.answer == "3"
    assert "'Pandas' is not a tool; use one of SQL, Python, Finish" in llm.requests[1].as_text()


def test_the_action_grammar_names_the_table_tools() -> None:
    llm = Enforcing(replies=[" done\nAction: Finish[1]"])
    ReAct(llm, task="wikitq").run(penguin_table(10), "how many?")
    grammar = llm.requests[0].constraint
    assert grammar is not None
    for call in ("SQL[SELECT 1]", "Python[len(df)]", "Finish[1]"):
        assert satisfies(grammar, f" thinking\nAction: {call}")
    assert not satisfies(grammar, " thinking\nAction: Search[penguins]")


def test_tabfact_statements_are_answered_yes_or_no() -> None:
    llm = ScriptedLLM(replies=[" it holds\nAction: Finish[True, there are]"])
    prediction = ReAct(llm, task="tabfact").run(penguin_table(10), "there are penguins")
    assert prediction.answer == "yes"
    assert "Statement: there are penguins\nQuestion: Is the statement true?" in (
        llm.requests[0].as_text()
    )


def test_tables_and_tasks_must_agree() -> None:
    llm = ScriptedLLM(replies=[])
    with pytest.raises(ConfigurationError, match="reads no table"):
        ReAct(llm, tools=[], task="hotpotqa").run(penguin_table(5), "how many?")
    with pytest.raises(ConfigurationError, match="none was given"):
        ReAct(llm, task="wikitq").run("how many?")
    with pytest.raises(ConfigurationError, match="needs the question"):
        ReAct(llm, task="wikitq").run(penguin_table(5))
    assert ReAct(llm, task="wikitq").config()["tools"] == ["SQL", "Python"]


@given(st.text(alphabet=st.characters(blacklist_characters="\n\r[]", codec="utf-8"), max_size=40),
       st.sampled_from(["SQL[SELECT 1]", "Python[len(df)]", "Finish[48]"]))  # fmt: skip
def test_every_step_the_action_grammar_allows_is_read(thought: str, call: str) -> None:
    grammar = react_action(["SQL", "Python"], "Action", "Finish")
    reply = f"{thought}Action: {call}"
    assert satisfies(grammar, reply)
    action = parse_action(reply)
    assert action is not None
    assert f"{action.tool}[{action.input}]" == call
