r"""Chat replies that open with a newline, and choosing a server's endpoint from the CLI.

``StoppingServer`` answers like llama.cpp's server with a small chat model: every reply
starts with blank lines and the request's stop strings are applied on the server from
the first character, so a ``"\n"`` stop empties the reply unless the client asks again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.scripted_server import Reply, ScriptedServer, taymyr_reply
from support.taymyr import EXAMPLE, QUESTION, REPO

from tablereason.cli import EXIT_MODEL, EXIT_OK, EXIT_USAGE, main
from tablereason.llm import OpenAIChat, OpenAICompletion, Request
from tablereason.llm.backends.server.chat import ENDPOINT_ENV
from tablereason.llm.errors import EmptyCompletionError
from tablereason.llm.resolve import base_llm


def _server_cut(text: str, stop: list[str]) -> tuple[str, str]:
    positions = [i for i in (text.find(s) for s in stop) if i >= 0]
    return (text[: min(positions)], "stop") if positions else (text, "stop")


class StoppingServer(ScriptedServer):
    """Scripted replies behind ``lead``, cut at the request's stop strings server-side."""

    def __init__(self, reply: Reply, lead: str = "\n\n", **kwargs: Any) -> None:
        super().__init__(reply, **kwargs)
        self.lead = lead
        self.paths: list[str] = []

    def build_reply(self, path: str, body: dict[str, Any], empty: bool = False) -> dict[str, Any]:
        data = super().build_reply(path, body, empty)
        self.paths.append(path)
        stop = body.get("stop") or []
        for choice in data["choices"]:
            key = "message" if "message" in choice else None
            text = choice["message"]["content"] if key else choice["text"]
            cut, reason = _server_cut(self.lead + text, list(stop))
            if key:
                choice["message"]["content"] = cut
            else:
                choice["text"] = cut
            choice["finish_reason"] = reason
        return data


@pytest.fixture
def leading_newlines(monkeypatch: pytest.MonkeyPatch) -> Iterator[StoppingServer]:
    with StoppingServer(taymyr_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        monkeypatch.delenv(ENDPOINT_ENV, raising=False)
        yield server


@pytest.mark.parametrize("profile", ["efficient", "paper"])
@pytest.mark.parametrize("endpoint", ["chat", "completion"])
def test_replies_that_open_with_a_newline_still_answer(
    leading_newlines: StoppingServer, profile: str, endpoint: str, capsys
) -> None:
    argv = ["ask", str(EXAMPLE), QUESTION, "--json", "--profile", profile]
    code = main([*argv, "--endpoint", endpoint])
    captured = capsys.readouterr()
    assert code == EXIT_OK, captured.err
    payload = json.loads(captured.out)
    assert payload["answer"] == ["1985"] and payload["error"] is None
    operations = [s["name"] for s in payload["trace"]["steps"] if s["kind"] == "operation"]
    assert operations[:1] == ["select_row"]  # the plan was read, not cut to nothing
    wanted = "/chat/completions" if endpoint == "chat" else "/completions"
    assert leading_newlines.paths and all(p.endswith(wanted) for p in leading_newlines.paths)
    assert endpoint == "chat" or not any("chat" in p for p in leading_newlines.paths)


def test_a_line_stop_is_asked_again_only_when_it_emptied_the_reply() -> None:
    with StoppingServer(lambda prompt: " 1985\nand more", lead="\n") as server:
        llm = OpenAIChat("m", base_url=server.url, api_key="k")
        done = llm.complete(Request(prompt="The answer is:", stop=("\n",), max_tokens=8))
        assert done.text == "1985" and done.usage.requests == 2
        assert [b.get("stop") for b in server.bodies] == [["\n"], None]
        server.lead = ""
        done = llm.complete(Request(prompt="The answer is:", stop=("\n",), max_tokens=8))
        assert done.text == " 1985" and done.usage.requests == 1 and len(server.bodies) == 3


def test_a_reply_empty_even_without_the_stop_names_the_endpoint_option() -> None:
    with StoppingServer(lambda prompt: "", lead="\n") as server:
        llm = OpenAIChat("m", base_url=server.url, api_key="k")
        with pytest.raises(EmptyCompletionError) as caught:
            llm.complete(Request(prompt="x", stop=("\n",), call_site="here"))
    message = str(caught.value)
    assert "--endpoint completion" in message and ENDPOINT_ENV in message
    assert "'here'" in message


def test_the_endpoint_comes_from_the_option_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "http://127.0.0.1:9/v1"
    monkeypatch.delenv(ENDPOINT_ENV, raising=False)
    assert isinstance(base_llm("m", base_url=url), OpenAIChat)
    monkeypatch.setenv(ENDPOINT_ENV, "completion")
    assert isinstance(base_llm("m", base_url=url), OpenAICompletion)
    assert isinstance(base_llm("m", base_url=url, endpoint="chat"), OpenAIChat)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_MODEL", "m")  # else the server is asked which model it serves
    assert isinstance(base_llm(quiet=True), OpenAICompletion)


def test_bad_endpoint_settings_are_usage_errors(
    leading_newlines: StoppingServer, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv(ENDPOINT_ENV, "chats")
    assert main(["ask", str(EXAMPLE), QUESTION]) == EXIT_USAGE
    assert "unknown endpoint 'chats'" in capsys.readouterr().err
    monkeypatch.delenv(ENDPOINT_ENV)
    assert main(["ask", str(EXAMPLE), QUESTION, "--model", "local", "--endpoint", "chat"]) == (
        EXIT_USAGE
    )
    assert "no server is in use" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["ask", str(EXAMPLE), QUESTION, "--endpoint", "responses"])
    assert "invalid choice: 'responses'" in capsys.readouterr().err


def test_eval_takes_the_endpoint_option(
    leading_newlines: StoppingServer, tmp_path: Path, capsys
) -> None:
    data = REPO / "tests" / "fixtures" / "datasets" / "tabfact_official"
    argv = ["eval", "--dataset", "tabfact", "--data-dir", str(data), "--limit", "2"]
    code = main([*argv, "--out", str(tmp_path / "run"), "--quiet", "--endpoint", "completion"])
    assert code == EXIT_OK, capsys.readouterr().err
    assert leading_newlines.paths and all(
        p.endswith("/completions") and "chat" not in p for p in leading_newlines.paths
    )
    assert code != EXIT_MODEL
