"""``tablereason eval --data-dir`` reaches the tools of ReWOO and ReAct (no environment variable).

The HotpotQA fixture (two official records) stands in for the data folder; a scripted
server plans one Wikipedia search (ReWOO) or one Search action (ReAct), so the trace
shows that the tool read the paragraphs of the folder given on the command line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.scripted_server import ScriptedServer
from support.taymyr import REPO

from tablereason.cli import EXIT_OK, main
from tablereason.datasets import DATA_DIR_ENV
from tablereason.evaluate.results import read_results

HOTPOTQA = REPO / "tests" / "fixtures" / "datasets" / "hotpotqa_official"
TITLE = "Kiss and Tell (1945 film)"


def hotpotqa_reply(prompt: str) -> str:
    """ReWOO: one search, then the solver's answer; ReAct: one search, then finish."""
    tail = prompt.rstrip()
    if tail.endswith("Plan:"):
        return f" Look up the film.\n#E1 = Wikipedia[{TITLE}]\n\n"
    if tail.endswith("A:"):
        return " Shirley Temple\n"
    if f"Action: Search[{TITLE}]\nObservation:" in prompt:
        return " I know the answer.\nAction: Finish[Shirley Temple]\n"
    return f" I should search for the film.\nAction: Search[{TITLE}]\n"


@pytest.fixture
def hotpotqa_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    with ScriptedServer(hotpotqa_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        yield server


@pytest.mark.parametrize("method", ["rewoo", "react"])
def test_eval_reads_the_data_dir_option_alone(
    method: str, hotpotqa_server: ScriptedServer, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    argv = ["eval", "--dataset", "hotpotqa", "--method", method, "--data-dir", str(HOTPOTQA)]
    code = main([*argv, "--limit", "1", "--out", str(out), "--quiet"])
    assert code == EXIT_OK, capsys.readouterr().err
    _, records, _ = read_results(out / "results.jsonl")
    assert len(records) == 1
    steps = (records[0].get("trace") or {}).get("steps", [])
    tool_steps = [s for s in steps if s["kind"] == "tool"]
    assert tool_steps, [s["kind"] for s in steps]
    observed = " ".join(text for s in tool_steps for text in s["raw"])
    assert "Kiss and Tell is a 1945 American comedy film" in observed, observed[:300]
