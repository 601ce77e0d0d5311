from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_server import FakeOpenAIServer, FakeSleep


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


@pytest.fixture
def fake_sleep() -> FakeSleep:
    return FakeSleep()
