"""Fixtures for the Chain-of-Table tests."""

from __future__ import annotations

from typing import Any

import pytest
from cot_helpers import load_fixture


@pytest.fixture(scope="session")
def tabfact_records() -> list[dict[str, Any]]:
    return load_fixture("tabfact")


@pytest.fixture(scope="session")
def wikitq_records() -> list[dict[str, Any]]:
    return load_fixture("wikitq")
