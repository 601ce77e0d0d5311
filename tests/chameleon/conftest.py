"""Fixtures for the Chameleon tests: small cut-outs of TabMWP and ScienceQA, and a sandbox.

The scripted model that answers by module is :func:`support.chameleon_replies.routed`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tablereason.datasets.example import Example
from tablereason.datasets.scienceqa import read_scienceqa
from tablereason.datasets.tabmwp import read_tabmwp
from tablereason.sandbox import PythonSandbox

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chameleon"


@pytest.fixture(scope="session")
def tabmwp_examples() -> dict[str, Example]:
    return {ex.id: ex for ex in read_tabmwp(FIXTURES / "tabmwp", "test")}


@pytest.fixture(scope="session")
def scienceqa_examples() -> dict[str, Example]:
    return {ex.id: ex for ex in read_scienceqa(FIXTURES / "scienceqa", "test")}


@pytest.fixture(scope="session")
def box() -> Iterator[PythonSandbox]:
    sandbox = PythonSandbox(workers=1)
    yield sandbox
    sandbox.close()
