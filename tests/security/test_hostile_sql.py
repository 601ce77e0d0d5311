"""Hostile SQL is refused or stopped with a clear error; host files untouched; next query runs."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tablereason.errors import SQLError
from tablereason.sandbox import SQLLimits, run_sql
from tablereason.sandbox.sql import SQLGuardError, SQLTimeoutError

TABLE = pd.DataFrame({"name": ["Ann", "Bo", "Cy"], "score": [3, 1, 2]})
CANARY_TEXT = "canary-original"


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="tablereason-sql-canary-"))
    (path / "canary.csv").write_text("a,b\n1,2\n")
    (path / "canary.txt").write_text(CANARY_TEXT)
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


HOSTILE = [
    ("read_csv", "SELECT * FROM read_csv('{d}/canary.csv')", SQLGuardError),
    ("read_csv_auto", "SELECT * FROM read_csv_auto('/etc/passwd')", SQLGuardError),
    ("read_text", "SELECT * FROM read_text('/etc/passwd')", SQLGuardError),
    ("read_parquet", "SELECT * FROM read_parquet('{d}/x.parquet')", SQLGuardError),
    ("read_json", "SELECT * FROM read_json_auto('{d}/x.json')", SQLGuardError),
    ("file_path_as_table", "SELECT * FROM '{d}/canary.csv'", SQLGuardError),
    ("url_as_table", "SELECT * FROM 'https://example.com/data.csv'", SQLGuardError),
    ("glob", "SELECT * FROM glob('{d}/*')", SQLGuardError),
    ("read_in_subquery", "SELECT (SELECT count(*) FROM read_csv('/etc/passwd')) AS n FROM t",
     SQLGuardError),
    ("read_in_cte", "WITH x AS (SELECT * FROM read_text('/etc/passwd')) SELECT * FROM x",
     SQLGuardError),
    ("attach", "ATTACH '{d}/evil.db' AS evil", SQLGuardError),
    ("detach", "DETACH memory", SQLGuardError),
    ("copy_to", "COPY t TO '{d}/out.csv'", SQLGuardError),
    ("copy_query_to", "COPY (SELECT * FROM t) TO '{d}/out.csv'", SQLGuardError),
    ("install", "INSTALL httpfs", SQLGuardError),
    ("load", "LOAD httpfs", SQLGuardError),
    ("pragma", "PRAGMA database_list", SQLGuardError),
    ("call_pragma", "CALL pragma_version()", SQLGuardError),
    ("set", "SET enable_external_access = true", SQLGuardError),
    ("set_memory", "SET memory_limit = '100GB'", SQLGuardError),
    ("reset", "RESET memory_limit", SQLGuardError),
    ("two_statements", "SELECT 1; SELECT 2", SQLGuardError),
    ("comment_hides_second", "SELECT 1 -- harmless\n; ATTACH '{d}/evil.db'", SQLGuardError),
    ("block_comment_hides_second", "SELECT 1 /* ok */; COPY t TO '{d}/out.csv'", SQLGuardError),
    ("create_table", "CREATE TABLE evil AS SELECT * FROM t", SQLGuardError),
    ("insert", "INSERT INTO t VALUES ('Eve', 9)", SQLGuardError),
    ("delete", "DELETE FROM t", SQLGuardError),
    ("drop", "DROP TABLE t", SQLGuardError),
    ("duckdb_settings", "SELECT * FROM duckdb_settings()", SQLGuardError),
    ("qualified_catalog", "SELECT * FROM system.main.duckdb_tables", SQLGuardError),
    ("host_variable_scan", "SELECT * FROM TABLE", SQLGuardError),
    ("python_replacement_scan", "SELECT * FROM os", SQLGuardError),
    ("getenv", "SELECT getenv('HOME') AS h FROM t", SQLGuardError),
    ("export_database", "EXPORT DATABASE '{d}/dump'", SQLGuardError),
    ("range_table_function", "SELECT * FROM range(100000000000)", SQLGuardError),
    ("huge_cross_join",
     "SELECT count(*) FROM t a, t b, t c, t d, t e, t f, t g, t h, t i, t j, t k, t l, "
     "t m, t n, t o, t p, t q, t r, t s, t u, t v, t w", (SQLTimeoutError, SQLError)),
    ("endless_recursive_cte",
     "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r",
     (SQLTimeoutError, SQLError)),
]  # fmt: skip


def test_enough_cases() -> None:
    assert len(HOSTILE) >= 20


@pytest.mark.parametrize(("query", "expected"), [c[1:] for c in HOSTILE],
                         ids=[c[0] for c in HOSTILE])  # fmt: skip
def test_hostile_sql_is_contained(folder: Path, query: str, expected) -> None:
    before = sorted(p.name for p in folder.iterdir())
    limits = SQLLimits(seconds=1.0, memory="128MB")
    with pytest.raises(expected) as info:
        run_sql({"t": TABLE}, query.format(d=folder), limits)
    assert str(info.value)  # a message for the model
    assert sorted(p.name for p in folder.iterdir()) == before
    assert (folder / "canary.txt").read_text() == CANARY_TEXT
    assert "TABLEREASON" not in str(info.value)
    again = run_sql({"t": TABLE}, "SELECT name FROM t ORDER BY score DESC LIMIT 1")
    assert again.rows == [("Ann",)]


def test_timeouts_stop_within_limit_plus_half_second() -> None:
    query = HOSTILE[-2][1]
    limits = SQLLimits(seconds=1.0, memory="128MB")
    import time

    started = time.perf_counter()
    with pytest.raises(SQLError):
        run_sql({"t": TABLE}, query, limits)
    assert time.perf_counter() - started < 1.0 + 0.5


def test_guard_runs_even_if_duckdb_would_refuse() -> None:
    # The refusal comes from the guard (clear message), not from DuckDB.
    with pytest.raises(SQLGuardError, match="table functions and file paths are not allowed"):
        run_sql({"t": TABLE}, "SELECT * FROM read_csv('/etc/passwd')")
    assert os.path.exists("/etc/passwd")
