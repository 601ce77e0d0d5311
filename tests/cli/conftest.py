from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.scripted_server import ScriptedServer, serving, taymyr_reply, wikitq_reply


@pytest.fixture
def taymyr_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    with serving(monkeypatch, taymyr_reply) as server:
        yield server


@pytest.fixture
def wikitq_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    with serving(monkeypatch, wikitq_reply) as server:
        yield server
