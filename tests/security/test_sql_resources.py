"""Resource bombs in model SQL end in a clear SQLError, fast, without growing anything.

Each bomb runs through ``run_sql`` and ``Table.sql`` with a 256 MB budget and a
1.5 s time limit. It must raise a ``SQLError`` within the time limit plus the
worker's grace; the calling process must not grow; the SQL worker's peak
resident memory must stay within its budget; and the next query must run.
Bombs that end only at the time limit are marked slow for ``Table.sql``.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tablereason.errors import SQLError
from tablereason.sandbox import SQLLimits, run_sql
from tablereason.sandbox.sql.engine import (
    SQLResourceError,
    SQLTimeoutError,
    memory_bytes,
    set_table_sql_limits,
    table_sql_limits,
    worker_pids,
)
from tablereason.sandbox.sql.guard import SQLGuardError
from tablereason.table import Table

LIMITS = SQLLimits(seconds=1.5, memory="256MB")
BUDGET = memory_bytes(LIMITS.memory)
ALLOWED_S = LIMITS.seconds + 2.0 + 1.0  # the time limit, the kill grace, a loaded machine
CROSS = ", ".join(f"t t{i}" for i in range(22))
CROSS_17 = ", ".join(f"t t{i}" for i in range(17))
TENFOLD = "||".join(["s"] * 10)
NEST = ", ".join(["l"] * 10)
LEVELS = list(zip("abcdef", "bcdefg", strict=True))  # CTE a feeds b, b feeds c...

BOMBS = [
    ("range_scalar", "SELECT len(range(300000000)) AS n", SQLResourceError),
    ("range_table", "SELECT count(*) FROM range(300000000)", SQLGuardError),
    ("unnest_generate_series",
     "SELECT count(*) FROM (SELECT unnest(generate_series(1, 3000000000)))", SQLResourceError),
    ("generate_series_dates",
     "SELECT len(generate_series(TIMESTAMP '2000-01-01', TIMESTAMP '2100-01-01', "
     "INTERVAL 1 SECOND)) AS n", SQLError),
    ("repeat", "SELECT length(repeat('x', 2000000000)) AS n", SQLResourceError),
    ("repeat_computed", "SELECT length(repeat(name, CAST(score AS BIGINT) * 1000000000)) FROM t",
     SQLError),
    ("repeat_list", "SELECT len(repeat([1, 2, 3], 300000000)) AS n", SQLResourceError),
    ("space", "SELECT length(space(2000000000)) AS n", SQLResourceError),
    ("lpad", "SELECT length(lpad('x', 2000000000, 'y')) AS n", SQLError),
    ("printf_width", "SELECT length(printf('%*d', 2000000000, 1)) AS n", SQLError),
    ("format_width", "SELECT length(format('{:>2000000000}', 1)) AS n", SQLError),
    ("list_resize", "SELECT len(list_resize([1], 300000000)) AS n", SQLResourceError),
    ("replace_amplified",
     "SELECT length(replace(repeat('x', 40000), 'x', repeat('y', 40000))) AS n", SQLError),
    ("lambda_amplified",
     "SELECT len(list_transform(range(20000), lambda x: repeat('y', 20000))) AS n", SQLError),
    ("concat_chain",
     "WITH a AS (SELECT repeat('x', 10000) AS s), "
     + ", ".join(f"{b} AS (SELECT {TENFOLD} AS s FROM {a})" for a, b in LEVELS[:5])
     + " SELECT length(s) FROM f", SQLResourceError),
    ("nested_lists",
     "WITH a AS (SELECT range(1000) AS l), "
     + ", ".join(f"{b} AS (SELECT [{NEST}] AS l FROM {a})" for a, b in LEVELS[:6])
     + " SELECT len(flatten(flatten(l))) FROM g", SQLResourceError),
    ("recursive_doubling",
     "WITH RECURSIVE r(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM r "
     "WHERE n < 40) SELECT max(length(s)) FROM r", SQLResourceError),
    ("string_agg_cross_join", f"SELECT length(string_agg(t0.name, ',')) FROM {CROSS_17}",
     SQLResourceError),
    ("list_aggregate_cross_join", f"SELECT len(list(t0.name)) FROM {CROSS_17}", SQLResourceError),
    ("sort_cross_join", f"SELECT t0.name FROM {CROSS_17} ORDER BY random() LIMIT 1", SQLError),
    # Its hash set grows at the speed of the CPU: on a loaded machine the time limit can
    # come before the memory budget, and either stop contains it.
    ("distinct_cross_join", f"SELECT count(DISTINCT random()) FROM {CROSS_17}",
     (SQLResourceError, SQLTimeoutError)),
    ("cross_join_count", f"SELECT count(*) FROM {CROSS}", SQLTimeoutError),
    ("endless_recursion",
     "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r",
     SQLError),
    ("huge_result", "SELECT repeat('x', 100000) AS v FROM t a, t b, t c, t d, t e, t f",
     SQLResourceError),
    ("long_text", "SELECT 1 AS x" + " " * 600_000, SQLGuardError),
    ("long_literal", "SELECT '" + "x" * 600_000 + "' AS x", SQLGuardError),
]  # fmt: skip
# Bombs that end only at the time limit (slow everywhere), and the few that also run
# through Table.sql in the default run (the path is the same worker; see run_sql's cases).
SLOW = {
    "generate_series_dates",
    "lpad",
    "replace_amplified",
    "lambda_amplified",
    "sort_cross_join",
    "endless_recursion",
}
FAST_ON_TABLE_SQL = {
    "range_scalar",
    "unnest_generate_series",
    "repeat",
    "string_agg_cross_join",
    "concat_chain",
    "huge_result",
    "long_text",
    "cross_join_count",
}


def test_enough_cases() -> None:
    assert len(BOMBS) >= 25


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _worker_peaks() -> Iterator[tuple[int, int]]:
    """(peak, current) resident bytes of each SQL worker."""
    for pid in worker_pids():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:  # it was killed and replaced
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        kib = [int(fields[k].split()[0]) * 1024 for k in ("VmHWM", "VmRSS")]
        yield kib[0], kib[1]


def _reset_worker_peaks() -> int:
    """Reset each worker's peak; return the largest resident size now."""
    largest = 0
    for pid in worker_pids():
        try:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        except OSError:
            continue
        largest = max([largest, *(current for _, current in _worker_peaks())])
    return largest


def _contained(run: object, expected: type[Exception], check_after: object) -> None:
    check_after()  # type: ignore[operator]  # a worker is up, with its tables
    before = _reset_worker_peaks()
    rss_before = _rss()
    maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.perf_counter()
    with pytest.raises(expected) as info:
        run()  # type: ignore[operator]
    elapsed = time.perf_counter() - started
    assert isinstance(info.value, SQLError) and str(info.value)
    assert elapsed < ALLOWED_S, f"took {elapsed:.1f} s"
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - maxrss_before
    assert grown < 64 * 2**20, f"the calling process peaked {grown / 2**20:.0f} MiB higher"
    assert _rss() - rss_before < 64 * 2**20
    for peak, _ in _worker_peaks():
        assert peak - before < BUDGET + 64 * 2**20, f"worker peaked at {peak / 2**20:.0f} MiB"
    check_after()  # type: ignore[operator]  # the engine still answers


FRAME = pd.DataFrame({"name": ["Ann", "Bo", "Cy"], "score": [3, 1, 2]})


@pytest.mark.parametrize(
    ("query", "expected"),
    [pytest.param(*b[1:], marks=pytest.mark.slow) if b[0] in SLOW else b[1:] for b in BOMBS],
    ids=[b[0] for b in BOMBS],
)
def test_run_sql_contains_the_bomb(query: str, expected: type[Exception]) -> None:
    def check_after() -> None:
        assert run_sql({"t": FRAME}, "SELECT max(score) AS m FROM t", LIMITS).rows == [(3,)]

    limits = LIMITS if not query.startswith("SELECT 1 AS x ") else SQLLimits(seconds=1.5)
    _contained(lambda: run_sql({"t": FRAME}, query, limits), expected, check_after)


@pytest.fixture
def table_limits() -> Iterator[None]:
    previous = table_sql_limits()
    limits = SQLLimits(seconds=1.5, memory="256MB", max_rows=1_000_000, max_query_chars=100_000)
    set_table_sql_limits(limits)
    yield
    set_table_sql_limits(previous)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        b[1:] if b[0] in FAST_ON_TABLE_SQL else pytest.param(*b[1:], marks=pytest.mark.slow)
        for b in BOMBS
    ],
    ids=[b[0] for b in BOMBS],
)
def test_table_sql_contains_the_bomb(
    table_limits: None, query: str, expected: type[Exception]
) -> None:
    table = Table.from_records(["name", "score"], [["Ann", "3"], ["Bo", "1"], ["Cy", "2"]])

    def check_after() -> None:
        assert table.sql("SELECT max(score) AS m FROM t", timeout_s=1.5).rows() == [["3"]]

    _contained(lambda: table.sql(query, timeout_s=1.5), expected, check_after)


def test_table_sql_refuses_too_many_rows() -> None:
    table = Table.from_records(["n"], [[str(i)] for i in range(100)])
    previous = table_sql_limits()
    set_table_sql_limits(SQLLimits(seconds=5, memory="256MB", max_rows=50))
    try:
        with pytest.raises(SQLError, match="more than 50 rows"):
            table.sql("SELECT * FROM t")
        assert len(table.sql("SELECT * FROM t LIMIT 50").rows()) == 50
    finally:
        set_table_sql_limits(previous)


def test_a_killed_worker_is_replaced() -> None:
    assert run_sql({"t": FRAME}, "SELECT count(*) FROM t").rows == [(3,)]
    for pid in worker_pids():
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    # the query finds its worker gone before sending, and takes a fresh one
    assert run_sql({"t": FRAME}, "SELECT count(*) FROM t").rows == [(3,)]
    assert run_sql({"t": FRAME}, "SELECT count(*) FROM t").rows == [(3,)]


def test_limits_are_validated() -> None:
    from tablereason.errors import ConfigurationError

    for bad in ({"memory": "lots"}, {"memory": "1MB"}, {"threads": 0}, {"seconds": 0},
                {"max_rows": -1}):  # fmt: skip
        with pytest.raises(ConfigurationError):
            SQLLimits(**bad)  # type: ignore[arg-type]
    assert memory_bytes("1.5GiB") == 3 * 2**29 and memory_bytes(2**30) == 2**30


def test_a_worker_that_cannot_start_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    from tablereason.sandbox.sql import engine as sqlengine
    from tablereason.sandbox.sql import worker as sqlworker

    monkeypatch.setattr(sqlengine, "_pool_instance", None)
    monkeypatch.setattr(sqlworker, "__file__", "/nonexistent/sqlworker.py")
    with pytest.raises(SQLError, match="could not start"):
        run_sql({"t": FRAME}, "SELECT 1 AS x")
    monkeypatch.undo()
    assert run_sql({"t": FRAME}, "SELECT count(*) FROM t").rows == [(3,)]


def test_a_worker_that_stops_answering_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    from tablereason.sandbox.sql import engine as sqlengine

    assert run_sql({"t": FRAME}, "SELECT count(*) FROM t").rows == [(3,)]
    monkeypatch.setattr(sqlengine, "_GRACE_S", 0.0)  # the parent gives up at the time limit
    pids = set(worker_pids())
    started = time.perf_counter()
    with pytest.raises(SQLTimeoutError):
        run_sql({"t": FRAME}, "SELECT length(lpad('x', 2000000000, 'y'))", SQLLimits(seconds=0.5))
    assert time.perf_counter() - started < 2.0
    assert len(pids - set(worker_pids())) == 1  # the busy worker was killed
    monkeypatch.undo()
    assert run_sql({"t": FRAME}, "SELECT count(*) FROM t").rows == [(3,)]
