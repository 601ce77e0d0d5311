"""ReWOO over the user's own tables: the plan's SQL and Python calls, in the worker and sandbox."""

from __future__ import annotations

import re

from support.penguins import QUESTION, check_counted_by_both_tools, penguin_table

from tablereason.llm import Capabilities, ScriptedLLM, satisfies
from tablereason.methods.rewoo.method import ReWOO
from tablereason.table import Table

PLAN = (
    " Count the Adelie rows.\n#E1 = SQL[SELECT count(*) AS n FROM t WHERE species = 'Adelie']\n"
    "Plan: Check it with Python.\n#E2 = Python[int((df['species'] == 'Adelie').sum())]"
)


class Enforcing(ScriptedLLM):
    """A scripted model that claims to enforce grammars."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(constraints=frozenset({"grammar"}), after=True)


def solver_reply(request) -> str:
    """The planner gets the plan; the solver answers with the last evidence it was shown."""
    prompt = request.as_text()
    if prompt.rstrip().endswith("Plan:"):
        return PLAN
    return " " + re.findall(r"Evidence: (.*)", prompt)[-1]


def test_rewoo_plans_sql_and_python_over_a_344_row_table() -> None:
    table = penguin_table()
    llm = ScriptedLLM(fn=solver_reply)
    prediction = ReWOO(llm, task="wikitq").run(table, QUESTION)
    check_counted_by_both_tools(prediction, table)
    planner, solver = (r.as_text() for r in llm.requests)
    assert "rows : 344" in planner and "SQL[input]:" in planner
    assert "rows : 344" not in solver  # the solver reads the question and the evidence
    assert solver.rstrip().endswith(f"Q: {QUESTION}\nA:")


def test_rewoo_takes_several_tables() -> None:
    islands = Table.from_records(["island", "country"], [["Dream", "AQ"]])
    plan = (
        " Join them.\n#E1 = SQL[SELECT count(*) AS n FROM penguins JOIN islands USING (island)]\n"
        "Plan: And a table nobody gave.\n#E2 = SQL[SELECT * FROM flights]"
    )
    llm = ScriptedLLM(replies=[plan, " 7"])
    tables = {"penguins": penguin_table(20), "islands": islands}
    prediction = ReWOO(llm, task="wikitq").run(tables, "how many penguins live on Dream?")
    dream = sum(1 for row in penguin_table(20).rows() if row[1] == "Dream")
    evidence = sorted(s.raw[0] for s in prediction.trace.steps if s.kind == "tool")  # concurrent
    assert evidence[1] == f"n\n{dream}"
    assert evidence[0].startswith("No evidence found: the query failed: unknown table 'flights'")
    assert prediction.answer == "7"


def test_a_plan_line_naming_an_unknown_tool_says_which_tools_there_are() -> None:
    llm = ScriptedLLM(replies=[" Look.\n#E1 = Pandas[df.head()]", " 3"])
    prediction = ReWOO(llm, task="wikitq").run(penguin_table(10), "how many?")
    (step,) = [s for s in prediction.trace.steps if s.kind == "tool"]
    assert step.error and "SQL" in step.error and "Python" in step.error


def test_the_plan_grammar_names_the_table_tools() -> None:
    llm = Enforcing(replies=[" Count.\n#E1 = SQL[SELECT 1]", " 1"])
    ReWOO(llm, task="wikitq").run(penguin_table(10), "how many?")
    grammar = llm.requests[0].constraint
    assert grammar is not None
    assert satisfies(grammar, " Count.\n#E1 = SQL[SELECT 1]\nPlan: Check.\n#E2 = Python[len(df)]")
    assert not satisfies(grammar, " Look.\n#E1 = Wikipedia[penguins]")
