"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real benchmark data beside the checkout (required, never skipped)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"benchmark data not found at {SHARED_DATA}; tests need ../shared/data")
    return SHARED_DATA
