from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_stand_in import install
from support.fake_server import FakeOpenAIServer, FakeSleep

from tablereason.llm.backends.server.client import ServerBackend


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


@pytest.fixture
def fake_sleep() -> FakeSleep:
    return FakeSleep()


@pytest.fixture(params=["openai", "http"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test once through the ``openai`` package and once through the lean JSON
    transport (both are what ``transport="auto"`` may pick for these URLs). Modules
    that want it for every test say ``pytestmark = pytest.mark.usefixtures("transport")``."""
    monkeypatch.setattr(ServerBackend, "_auto_transport", lambda self: request.param)
    return str(request.param)


@pytest.fixture(autouse=True)
def fresh_server_kinds() -> Iterator[None]:
    """Servers' kinds are remembered per URL; tests reuse ports, so each starts afresh."""
    from tablereason.llm.backends.server import probe

    probe.forget()
    yield
    probe.forget()


@pytest.fixture
def stand_in_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A model file for the embedded backend, answered by the batch-aware stand-in
    (``llama_stand_in.py``) installed as ``llama_cpp`` for the test."""
    install(monkeypatch)
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    return path
