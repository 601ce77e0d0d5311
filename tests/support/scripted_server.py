"""An OpenAI-compatible test server whose replies follow a script (a function of the prompt).

It reuses the fake server of the LLM tests and only replaces how a reply is made, so
the command line, the trace pages and sharded runs can be tested end to end, over HTTP on
127.0.0.1, without a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from support.fake_server import FakeOpenAIServer, prompt_of

Reply = Callable[[str], str]


def taymyr_reply(prompt: str) -> str:
    """Chain-of-Table replies for the Taymyr births question: pick row 4, two columns."""
    tail = prompt.rstrip()
    if tail.endswith("Function Chain:"):
        return " f_select_row(row 4) -> f_select_column() -> <END>"
    if tail.endswith("f_row(["):
        return "row 4"
    if tail.endswith("f_col(["):
        return "Column 1, Live births"
    if tail.endswith("The answer is:"):
        return " 1985"
    return "<END>"


def wikitq_reply(prompt: str) -> str:
    """Generic replies: end the chain at once and answer with the first cell of row 1."""
    tail = prompt.rstrip()
    if tail.endswith("Function Chain:"):
        return " <END>"
    if tail.endswith("The answer is:"):
        for line in prompt.splitlines()[::-1]:
            if line.startswith("row 1 : "):
                return " " + line[len("row 1 : ") :].split(" | ")[0]
        return " none"
    return "<END>"


class ScriptedServer(FakeOpenAIServer):
    """The fake server, answering every request with ``reply(prompt)``."""

    def __init__(self, reply: Reply, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reply = reply

    def build_reply(self, path: str, body: dict[str, Any], empty: bool = False) -> dict[str, Any]:
        data = super().build_reply(path, body, empty)
        text = self.reply(prompt_of(body))
        for choice in data["choices"]:
            if "message" in choice:
                choice["message"]["content"] = text
            else:
                choice["text"] = text
        data["usage"]["completion_tokens"] = len(text.split()) * len(data["choices"])
        data["usage"]["total_tokens"] = (
            data["usage"]["prompt_tokens"] + data["usage"]["completion_tokens"]
        )
        return data


@contextmanager
def serving(monkeypatch: pytest.MonkeyPatch, reply: Reply) -> Iterator[ScriptedServer]:
    """A :class:`ScriptedServer` that the environment names as the OpenAI model to use."""
    with ScriptedServer(reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        yield server
