"""Live steps: `ask` shows each step as it completes, `tr.ask(on_step=...)` and eval hear them."""

from __future__ import annotations

import io
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.scripted_server import ScriptedServer, taymyr_reply, wikitq_reply
from support.taymyr import EXAMPLE, QUESTION

from tablereason.api import ask
from tablereason.cli import EXIT_OK, main
from tablereason.datasets import load_dataset
from tablereason.evaluate.runner import run_evaluation
from tablereason.llm import ScriptedLLM
from tablereason.methods import build_method
from tablereason.trace import Trace, TraceStep
from tablereason.trace.listen import following
from tablereason.trace.live import LiveSteps

SCRIPT = Path(sys.executable).parent / "tablereason"


def _lines(stream: Any) -> queue.Queue[str]:
    """The lines of a child's output, read on a thread as they come."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")  # the end

    threading.Thread(target=pump, daemon=True).start()
    return lines


def test_the_first_step_lines_appear_while_the_question_is_still_running() -> None:
    """The second reply waits until the test has read the plan step from the child's stdout."""
    gate = threading.Event()
    calls: list[str] = []

    def reply(prompt: str) -> str:
        calls.append(prompt)
        if len(calls) == 2:  # the column selection: held until the first steps are seen
            gate.wait(60)
        return taymyr_reply(prompt)

    with ScriptedServer(reply) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "unused",
               "OPENAI_MODEL": "fake-model"}  # fmt: skip
        child = subprocess.Popen(
            [str(SCRIPT), "ask", str(EXAMPLE), QUESTION],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            lines = _lines(child.stdout)
            seen: list[str] = []
            deadline = time.monotonic() + 30
            while not any("plan → select_row" in line for line in seen):
                left = deadline - time.monotonic()
                assert left > 0, f"no plan step within 30 s while the run waits: {seen}"
                line = lines.get(timeout=left)
                assert line, f"the output ended before the plan step: {seen}"
                seen.append(line)
            # read while the second reply is still held back: the run has not finished
            assert child.poll() is None and not gate.is_set()
            assert server.counts.replies == 1 and len(calls) <= 2  # reply 2 not yet sent
            assert seen[0].startswith("Question: ")
            assert any("1. input · table" in line for line in seen)
        finally:
            gate.set()
        assert child.wait(timeout=60) == EXIT_OK, child.stderr.read() if child.stderr else ""
        rest = "".join(iter(lambda: lines.get(timeout=10), ""))
    assert "operation · select_column" in rest
    assert rest.rstrip().endswith("Answer: 1985\nEvidence: row 4, Column 1 = 1985")
    assert "\x1b" not in "".join(seen) + rest  # piped: plain lines, no spinner or colours


def test_ask_on_step_hears_each_step_while_the_run_goes_on() -> None:
    heard: list[str] = []
    heard_before_request: list[int] = []

    def reply(request: Any) -> str:
        heard_before_request.append(len(heard))
        return taymyr_reply(request.as_text())

    prediction = ask(EXAMPLE, QUESTION, llm=ScriptedLLM(fn=reply),
                     on_step=lambda step: heard.append(step.name))  # fmt: skip
    assert prediction.answer == ["1985"]
    assert heard == [s.name for s in prediction.trace.steps]  # each once, in order
    # the plan and the row selection were reported before the model was asked again
    assert heard_before_request[0] == 1 and heard_before_request[-1] >= 3


def test_eval_examples_report_their_steps_to_the_hook(fixture_data: Path, tmp_path: Path) -> None:
    examples = load_dataset("wikitq", "test", data_dir=fixture_data, limit=3)
    method = build_method(
        "chain_of_table", ScriptedLLM(fn=lambda r: wikitq_reply(r.as_text())), task="wikitq"
    )
    heard: list[tuple[str, str]] = []
    lock = threading.Lock()

    def on_step(example: Any, step: TraceStep) -> None:
        with lock:
            heard.append((example.id, step.name))

    out = tmp_path / "results.jsonl"
    run_evaluation(method, examples, out, concurrency=2, progress=False, on_step=on_step)
    from tablereason.evaluate.results import read_results

    _, records, _ = read_results(out)
    for record in records:
        names = [s["name"] for s in record["trace"]["steps"]]
        assert [n for i, n in heard if i == record["id"]] == names
    assert {i for i, _ in heard} == {e.id for e in examples}


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_spinner_names_the_running_step_and_its_time() -> None:
    out = FakeTerminal()
    with LiveSteps("q?", out) as live:
        with following(live.finished, on_start=live.started):
            trace = Trace(question="q?")
            step = trace.add(TraceStep(kind="plan", name="plan")).start()
            time.sleep(0.5)
            step.stop()
        live.outcome("yes", None)
    text = out.getvalue()
    assert re.search(r"1\. plan · plan · 0\.\d s", text), text  # the spinner, with the time
    assert "plan → plan" in text and "Answer:" in text


def test_quiet_prints_the_answer_and_its_evidence_only(taymyr_server, capsys) -> None:
    assert main(["ask", str(EXAMPLE), QUESTION, "--quiet"]) == EXIT_OK
    assert capsys.readouterr().out == "Answer: 1985\nEvidence: row 4, Column 1 = 1985\n"


@pytest.mark.parametrize("output", [["--json"], ["--answer-only"]])
def test_machine_outputs_have_no_live_lines(taymyr_server, capsys, output) -> None:
    assert main(["ask", str(EXAMPLE), QUESTION, *output]) == EXIT_OK
    printed = capsys.readouterr().out
    before = printed.split('"trace"')[0]  # the trace itself holds every prompt's text
    assert "Question:" not in before and "select_row" not in before
