"""``tablereason ask`` with ReAct, ReWOO and Chameleon on a table of one's own, end to end.

A scripted OpenAI-compatible server on 127.0.0.1 plays the model; the tools really run (the
SQL worker and the sandbox), and the answers the server gives back are read from the
observations and evidence the tools produced, so a right answer means the tools ran.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.penguins import QUESTION, adelie_count, write_penguins
from support.scripted_server import serving

from tablereason.cli import EXIT_OK, main

N_CTX = 8192
"""The embedded model's default context, in tokens."""
SQL = "SELECT count(*) AS n FROM t WHERE species = 'Adelie'"
PYTHON = "int((df['species'] == 'Adelie').sum())"


def agent_reply(prompt: str) -> str:
    """The model of every method of this file, read from the prompt it is sent."""
    tail = prompt.rstrip()
    if tail.endswith("Modules:"):  # Chameleon's planner
        return ' ["program_generator", "program_executor", "answer_generator"]'
    if tail.endswith("Plan:"):  # ReWOO's planner
        return (
            f" Count with SQL.\n#E1 = SQL[{SQL}]\nPlan: Check with Python.\n#E2 = Python[{PYTHON}]"
        )
    if tail.endswith("A:"):  # ReWOO's solver: the Python evidence
        return " " + re.findall(r"Evidence: (.*)", prompt)[-1]
    if "Thought:" in tail[-2000:]:  # ReAct: SQL, then Python, then what Python said
        asked = prompt[prompt.rindex(f"Question: {QUESTION}") :]
        seen = re.findall(r"Observation: (.*)", asked)
        if not seen:
            return f" I count with SQL.\nAction: SQL[{SQL}]"
        if len(seen) == 1:
            return f" I check with Python.\nAction: Python[{PYTHON}]"
        return f" Both agree.\nAction: Finish[{seen[-1]}]"
    return f"ans = {PYTHON}"  # Chameleon's program generator


@pytest.fixture
def agent_server(monkeypatch: pytest.MonkeyPatch):
    with serving(monkeypatch, agent_reply) as server:
        yield server


def token_bound(prompt: str) -> int:
    """An upper bound on a prompt's tokens: every token holds at least one byte, plus the
    chat template's few marks."""
    return len(prompt.encode("utf-8")) + 16


@pytest.mark.parametrize(
    ("method", "task"),
    [("react", []), ("rewoo", []), ("chameleon", []), ("chameleon", ["--task", "tabmwp"])],
)
def test_ask_a_344_row_table_of_ones_own_with_each_method(
    method: str, task: list[str], agent_server, tmp_path: Path, capsys
) -> None:
    table = write_penguins(tmp_path)
    code = main(["ask", str(table), QUESTION, "--method", method, *task, "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == EXIT_OK, payload["error"]
    assert payload["answer"] == str(adelie_count())
    steps = payload["trace"]["steps"]
    if method != "chameleon":
        tools = [s for s in steps if s["kind"] == "tool"]
        assert sorted(s["name"] for s in tools) == ["Python", "SQL"]
        assert all(s["raw"] == [f"n\n{adelie_count()}"] or s["raw"] == [str(adelie_count())]
                   for s in tools)  # fmt: skip
    prompts = [p for s in steps for p in s.get("prompts") or []]
    assert prompts
    for prompt in prompts:
        assert token_bound(prompt) + 512 <= N_CTX  # 512: above every completion budget here
    assert any("rows : 344" in p for p in prompts)


def test_ask_the_table_agent_prints_its_steps(agent_server, tmp_path: Path, capsys) -> None:
    table = write_penguins(tmp_path)
    assert main(["ask", str(table), QUESTION, "--method", "react"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "tool · SQL" in out and "tool · Python" in out
    assert f"Answer: {adelie_count()}" in out


def test_ask_the_table_agent_over_two_named_tables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    penguins = write_penguins(tmp_path)
    islands = tmp_path / "islands.csv"
    islands.write_text("island,country\nDream,AQ\nBiscoe,AQ\n", encoding="utf-8")
    join = "SELECT count(*) AS n FROM penguins JOIN islands USING (island)"

    def reply(prompt: str) -> str:
        seen = re.findall(r"Observation: (.*)", prompt[prompt.rindex("Question: how many") :])
        if not seen:
            return f" join them\nAction: SQL[{join}]"
        if len(seen) == 1:
            return " and in Python\nAction: Python[len(penguins.merge(islands, on='island'))]"
        return f" done\nAction: Finish[{seen[-1]}]"

    question = "how many penguins live on an island of the list?"
    argv = ["ask", "--table", f"penguins={penguins}", "--table", f"islands={islands}",
            question, "--method", "react", "--json"]  # fmt: skip
    with serving(monkeypatch, reply):
        code = main(argv)
    payload = json.loads(capsys.readouterr().out)
    assert code == EXIT_OK, payload["error"]
    rows = [line.split(",") for line in penguins.read_text().splitlines()[1:]]
    listed = sum(1 for row in rows if row[1] in {"Dream", "Biscoe"})
    assert payload["answer"] == str(listed)
    tools = [s for s in payload["trace"]["steps"] if s["kind"] == "tool"]
    assert [s["raw"] for s in tools] == [[f"n\n{listed}"], [str(listed)]]
    prompt = next(s["prompts"][0] for s in payload["trace"]["steps"] if s.get("prompts"))
    assert "Table penguins (penguins in SQL and Python):" in prompt
    assert "Table islands (islands in SQL and Python):" in prompt
