from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.scripted_server import ScriptedServer, taymyr_reply, wikitq_reply


@pytest.fixture
def taymyr_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    with ScriptedServer(taymyr_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        yield server


@pytest.fixture
def wikitq_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    with ScriptedServer(wikitq_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        yield server
