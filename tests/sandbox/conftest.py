from __future__ import annotations

from collections.abc import Iterator

import pytest

from tablereason.sandbox import PythonSandbox
from tablereason.sandbox import python as sandbox_python


@pytest.fixture(scope="session")
def box() -> Iterator[PythonSandbox]:
    sandbox = PythonSandbox(workers=1)
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="session", autouse=True)
def _close_default_pool() -> Iterator[None]:
    yield
    if sandbox_python._default is not None:
        sandbox_python._default.close()
