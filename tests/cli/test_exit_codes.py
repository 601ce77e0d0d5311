"""Honest exits: every method's `ask` ends with the code docs/cli.md gives, and says why.

0 with an answer; 4 when the model failed (an unreachable server, a backend that
failed after its retries); 5 when the run ended without an answer for any other
reason, an empty answer included. The reason is printed whatever the output mode.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.scripted_server import ScriptedServer
from support.taymyr import EXAMPLE

from tablereason.cli import EXIT_MODEL, EXIT_NO_ANSWER, EXIT_OK, main
from tablereason.cli.method_catalog import describe
from tablereason.llm import RetryingLLM, RetryPolicy
from tablereason.methods import METHODS

QUESTION = "which year had most deaths?"
NO_ANSWER_REPLY = {"chain_of_table": "|", "chameleon_cot": " ", "self_consistency": "|",
                   "mix_sc": "|", "table_critic": "|"}  # fmt: skip
"""Replies after which each method has no answer ("Answer:" for the others)."""


def _task_args(method: str) -> list[str]:
    """``--task`` for a method on the user's table: one it builds for without data files."""
    info = describe(method)
    if not info.takes_task:
        return []
    usable = [t for t in info.tasks if t not in info.tasks_needing_data]
    tabular = [t for t in ("wikitq", "tabmwp", "tabfact") if t in usable]  # about a table
    return ["--task", (tabular or usable)[0]]


EVERY_METHOD = METHODS.names()


@pytest.fixture
def dead_url() -> str:
    """A URL where nothing listens: a port that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two attempts, no waiting (the default policy would wait half a minute)."""
    policy = RetryPolicy(max_attempts=2, base_delay=0.0, max_delay=0.0)
    monkeypatch.setattr(
        "tablereason.llm.resolve.RetryingLLM",
        lambda inner, retry=None: RetryingLLM(inner, policy, sleep=lambda s: None),
    )


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    replies: dict[str, str] = {}

    def reply(prompt: str) -> str:
        return replies.get("text", "Answer:")

    with ScriptedServer(reply) as running:
        running.replies = replies  # type: ignore[attr-defined]
        monkeypatch.setenv("OPENAI_BASE_URL", running.url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        yield running


def _ask(method: str, *extra: str) -> list[str]:
    return ["ask", str(EXAMPLE), QUESTION, "--method", method, *_task_args(method), *extra]


@pytest.mark.parametrize("method", EVERY_METHOD)
def test_an_unreachable_server_is_exit_4_at_once_for_every_method(
    method: str, dead_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    said = f"the server at {dead_url} is unreachable (connection refused)"
    started = time.monotonic()
    code = main(_ask(method, "--base-url", dead_url, "--model", "q", "--answer-only"))
    took = time.monotonic() - started
    printed = capsys.readouterr()
    assert code == EXIT_MODEL
    assert printed.out.strip() == "" and said in printed.err  # the reason, on stderr
    assert "gpt-4o-mini" not in printed.err
    assert took < 15, f"{took:.1f} s: connection refused is not retried at length"
    assert main(_ask(method, "--base-url", dead_url, "--model", "q")) == EXIT_MODEL
    out = capsys.readouterr().out
    assert any(line.startswith("Failed: ") and said in line for line in out.splitlines()), out


@pytest.mark.parametrize("method", EVERY_METHOD)
def test_a_backend_failing_after_retries_is_exit_4_for_every_method(
    method: str, server: ScriptedServer, quick_retries: None, capsys: pytest.CaptureFixture[str]
) -> None:
    server.inject(*["500"] * 400)
    assert main(_ask(method, "--json")) == EXIT_MODEL
    printed = capsys.readouterr()
    payload = json.loads(printed.out)
    assert payload["exit_code"] == EXIT_MODEL and payload["answer"] in ("", [])
    assert "HTTP 500" in payload["error"] and "HTTP 500" in printed.err


@pytest.mark.parametrize("method", EVERY_METHOD)
def test_no_answer_is_exit_5_with_the_reason_for_every_method(
    method: str, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server.replies["text"] = NO_ANSWER_REPLY.get(method, "Answer:")
    assert main(_ask(method)) == EXIT_NO_ANSWER
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith("Failed: ")]
    assert failed and len(failed[0]) > len("Failed: ") + 10, out
    assert out.rstrip().endswith("Answer:")
    assert main(_ask(method, "--answer-only")) == EXIT_NO_ANSWER
    printed = capsys.readouterr()
    assert printed.out.strip() == ""
    assert printed.err.startswith("tablereason: no answer: ") and len(printed.err) > 40
    assert main(_ask(method, "--json")) == EXIT_NO_ANSWER
    payload = json.loads(capsys.readouterr().out)
    assert payload["exit_code"] == EXIT_NO_ANSWER and payload["error"]


def test_chameleon_with_an_empty_answer_on_a_users_table_is_exit_5(
    server: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    airlines = tmp_path / "airlines.csv"
    airlines.write_text("carrier,name\n9E,Endeavor Air Inc.\nAA,American Airlines Inc.\n"
                        "UA,United Air Lines Inc.\n", encoding="utf-8")  # fmt: skip
    argv = ["ask", str(airlines), "what is the name of the carrier with code UA?",
            "--method", "chameleon", "--task", "tabmwp"]  # fmt: skip
    assert main(argv) == EXIT_NO_ANSWER
    out = capsys.readouterr().out
    assert "Failed: chameleon gave an empty answer" in out


def test_every_registered_method_has_a_case() -> None:
    assert set(EVERY_METHOD) == set(METHODS.names()) and len(EVERY_METHOD) >= 8
    for method in EVERY_METHOD:
        _task_args(method)  # builds for a task without data files


def test_an_answer_is_exit_0(server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    server.replies["text"] = "1994"
    assert main(_ask("chain_of_table", "--answer-only")) == EXIT_OK
    assert capsys.readouterr().out == "1994\n"
