"""The process-wide database's settings: thread count and memory limit defaults."""

from __future__ import annotations

import pytest

from tablereason.table import database as db
from tablereason.table import storage


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (3, 1), (4, 2), (8, 4), (64, 4)])
def test_half_the_cores_between_one_and_four(
    monkeypatch: pytest.MonkeyPatch, cores: int, threads: int
) -> None:
    monkeypatch.delenv("TABLEREASON_DUCKDB_THREADS", raising=False)
    monkeypatch.setattr(db.os, "cpu_count", lambda: cores)
    assert db.database_settings()["threads"] == threads


def test_the_environment_chooses_another_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLEREASON_DUCKDB_THREADS", "3")
    assert db.database_settings()["threads"] == 3


def test_the_running_database_uses_its_settings() -> None:
    wanted = db.database_settings()["threads"]
    cursor = storage.database().cursor()  # closed after, so no transaction stays open
    try:
        assert cursor.execute("SELECT current_setting('threads')").fetchone() == (wanted,)
    finally:
        cursor.close()
    assert storage.configure_database is db.configure_database  # still importable from storage
