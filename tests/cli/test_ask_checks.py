"""`tablereason ask` shows the answer's evidence and warnings in every output mode."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from support.scripted_server import ScriptedServer, serving, taymyr_reply
from support.taymyr import EXAMPLE, QUESTION

from tablereason.cli import main
from tablereason.cli.exit_codes import EXIT_OK

SAID = " The first year to reach it was 1985."


def said_reply(prompt: str) -> str:
    """The Taymyr chain, answered with a sentence that names the year."""
    reply = taymyr_reply(prompt)
    return SAID if reply == " 1985" else reply


@pytest.fixture
def said_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    with serving(monkeypatch, said_reply) as server:
        yield server


def test_the_trace_ends_with_the_evidence_and_the_warnings(said_server, capsys) -> None:
    assert main(["ask", str(EXAMPLE), QUESTION]) == EXIT_OK
    out = capsys.readouterr().out
    tail = out.rstrip().splitlines()[-3:]
    assert tail[0] == f"Answer: {SAID.strip()}"
    assert tail[1] == "Evidence: row 4, Column 1 = 1985"
    assert tail[2].startswith("Warning [sentence]: the answer 'The first year")
    assert "read as '1985'" in tail[2]


def test_answer_only_keeps_stdout_for_the_answer(said_server, capsys) -> None:
    assert main(["ask", str(EXAMPLE), QUESTION, "--answer-only"]) == EXIT_OK
    printed = capsys.readouterr()
    assert printed.out == SAID.strip() + "\n"
    lines = printed.err.splitlines()
    assert lines[0] == "tablereason: Evidence: row 4, Column 1 = 1985"
    assert lines[1].startswith("tablereason: Warning [sentence]: ")


def test_json_has_the_value_the_evidence_and_the_warnings(said_server, capsys) -> None:
    assert main(["ask", str(EXAMPLE), QUESTION, "--json"]) == EXIT_OK
    payload = json.loads(capsys.readouterr().out)
    assert payload["answer"] == [SAID.strip()]  # the model's answer, as scorers read it
    assert payload["value"] == {
        "type": "number",
        "value": 1985,
        "text": "1985",
        "notes": [
            "reduced the sentence to '1985', the one cell it names that the question does not"
        ],
    }
    evidence = payload["evidence"]
    assert evidence["status"] == "found" and evidence["basis"] == "lineage"
    assert evidence["cells"] == [{"row": 3, "column": "Column 1", "value": "1985"}]
    assert evidence["marks"]["0"] == [[3, "Column 1"]]  # the input table, step 1
    assert [w["code"] for w in payload["warnings"]] == ["sentence"]


def test_a_right_answer_has_evidence_and_no_warning(taymyr_server, capsys) -> None:
    assert main(["ask", str(EXAMPLE), QUESTION, "--answer-only"]) == EXIT_OK
    printed = capsys.readouterr()
    assert printed.out == "1985\n"
    assert printed.err == "tablereason: Evidence: row 4, Column 1 = 1985\n"
