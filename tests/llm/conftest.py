from __future__ import annotations

from collections.abc import Iterator

import pytest
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
