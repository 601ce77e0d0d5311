"""Model SQL: the time to refuse each resource bomb, and what the contained worker costs.

For each bomb: seconds until the SQLError (through ``run_sql`` and ``Table.sql``), the
error class, the SQL worker's peak resident growth and the calling process's growth.
Then latency: ``Table.sql`` and ``run_sql`` on a 100-row table against the same query
run directly on an in-process DuckDB cursor over the same data (what ``Table.sql``
did before the worker), the first query of a process (worker start), and a
1,000,000-row table (first query, which sends the table, and repeated queries).

Run: python benchmarks/bench_sql_guard.py [--repeat N] [--skip-large]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb
import pandas as pd

from tablereason.errors import SQLError
from tablereason.sandbox import SQLLimits, run_sql
from tablereason.sandbox.sql.engine import set_table_sql_limits, worker_pids
from tablereason.table import Table

LIMITS = SQLLimits(seconds=5.0, memory="256MB")
CROSS = ", ".join(f"t t{i}" for i in range(22))
CROSS_17 = ", ".join(f"t t{i}" for i in range(17))
BOMBS = {
    "range(3e8) as a value": "SELECT len(range(300000000)) AS n",
    "unnest(generate_series(1, 3e9))":
        "SELECT count(*) FROM (SELECT unnest(generate_series(1, 3000000000)))",
    "repeat('x', 2e9)": "SELECT length(repeat('x', 2000000000)) AS n",
    "lpad to 2e9": "SELECT length(lpad('x', 2000000000, 'y')) AS n",
    "printf width 2e9": "SELECT length(printf('%*d', 2000000000, 1)) AS n",
    "string_agg over a 3^17-row cross join":
        f"SELECT length(string_agg(t0.name, ',')) FROM {CROSS_17}",
    "list() over a 3^17-row cross join": f"SELECT len(list(t0.name)) FROM {CROSS_17}",
    "cross join count (3^22 rows)": f"SELECT count(*) FROM {CROSS}",
    "tenfold concatenation over 5 CTEs":
        "WITH a AS (SELECT repeat('x', 10000) AS s), "
        + ", ".join(
            f"{b} AS (SELECT {'||'.join(['s'] * 10)} AS s FROM {a})"
            for a, b in zip("abcde", "bcdef", strict=True)
        )
        + " SELECT length(s) FROM f",
    "recursive doubling": "WITH RECURSIVE r(s, n) AS (SELECT 'x', 0 UNION ALL "
    "SELECT s || s, n + 1 FROM r WHERE n < 40) SELECT max(length(s)) FROM r",
    "endless recursive CTE":
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r",
    "600 kB query text": "SELECT 1 AS x" + " " * 600_000,
}  # fmt: skip
QUERY = 'SELECT "Nation", count(*) AS n FROM t GROUP BY "Nation"'


def peak_kib(pid: int) -> int:
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmHWM"].split()[0])


def reset_peaks() -> int:
    largest = 0
    for pid in worker_pids():
        try:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
            largest = max(largest, peak_kib(pid))
        except OSError:
            continue
    return largest


def worker_peak() -> int:
    peaks = []
    for pid in worker_pids():
        try:
            peaks.append(peak_kib(pid))
        except OSError:
            continue
    return max(peaks, default=0)


def bomb(run: Callable[[], object], warm: Callable[[], object]) -> dict[str, object]:
    warm()
    before = reset_peaks()
    caller = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        run()
        outcome = "returned"
    except SQLError as error:
        outcome = type(error).__name__
    elapsed = time.perf_counter() - started
    worker = max(worker_peak() - before, 0)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - caller
    warm()  # the engine answers afterwards
    return {"s": elapsed, "error": outcome, "worker_mib": worker / 1024, "caller_mib": grown / 1024}


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def medal_rows(n: int) -> list[list[str]]:
    return [[f"nation {i % 13}", str(i % 7), str(i % 5), str(i)] for i in range(n)]


def latency(repeat: int, skip_large: bool) -> dict[str, float]:
    header = ["Nation", "Gold", "Silver", "Total"]
    small = Table.from_records(header, medal_rows(100))
    frame = small.to_pandas()
    direct = duckdb.connect(":memory:").cursor()
    direct.register("incoming", frame)
    direct.execute("CREATE TABLE t AS SELECT * FROM incoming")
    direct.unregister("incoming")
    figures = {
        "direct DuckDB cursor, 100 rows (baseline)": median_ms(
            lambda: direct.execute(QUERY).fetchall(), repeat
        ),
        "Table.sql, 100 rows, repeated query": median_ms(lambda: small.sql(QUERY), repeat),
        "run_sql, 100 rows (table sent every call)": median_ms(
            lambda: run_sql({"t": frame}, QUERY), repeat
        ),
        "Table.sql, first query on a new 100-row table": median_ms(
            lambda: Table.from_records(header, medal_rows(100)).sql(QUERY), repeat
        ),
    }
    if not skip_large:
        big_rows = medal_rows(1_000_000)
        big = Table.from_records(header, big_rows)
        direct.register("incoming", pd.DataFrame(big_rows, columns=header))
        direct.execute("CREATE TABLE big AS SELECT * FROM incoming")
        direct.unregister("incoming")
        started = time.perf_counter()
        big.sql(QUERY)
        figures["Table.sql, 1,000,000 rows, first query (sends the table)"] = (
            time.perf_counter() - started
        ) * 1000
        figures["Table.sql, 1,000,000 rows, repeated query"] = median_ms(
            lambda: big.sql(QUERY), max(3, repeat // 10)
        )
        figures["direct DuckDB cursor, 1,000,000 rows (baseline)"] = median_ms(
            lambda: direct.execute(QUERY.replace("FROM t", "FROM big")).fetchall(),
            max(3, repeat // 10),
        )
    return figures


def first_query_ms() -> float:
    """A fresh interpreter's first Table.sql (starts the worker) minus its second."""
    code = (
        "import time\nfrom tablereason.table import Table\n"
        "t = Table.from_records(['a'], [['1'], ['2']])\n"
        "q = 'SELECT count(*) AS n FROM t'\n"
        "s = time.perf_counter(); t.sql(q); a = time.perf_counter() - s\n"
        "s = time.perf_counter(); t.sql(q); b = time.perf_counter() - s\n"
        "print((a - b) * 1000)\n"
    )
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    print(f"# {platform.python_version()}, duckdb {duckdb.__version__}, load {os.getloadavg()}")
    print(f"limits: {LIMITS.seconds:g} s, {LIMITS.memory}, {LIMITS.threads} thread(s)\n")
    frame = pd.DataFrame({"name": ["Ann", "Bo", "Cy"], "score": [3, 1, 2]})
    table = Table.from_records(["name", "score"], [["Ann", "3"], ["Bo", "1"], ["Cy", "2"]])
    set_table_sql_limits(
        SQLLimits(seconds=LIMITS.seconds, memory=LIMITS.memory, threads=1, max_rows=1_000_000)
    )
    print(
        "| bomb | path | seconds to the error | error "
        "| worker peak growth MiB | caller growth MiB |"
    )
    print("|---|---|---|---|---|---|")
    for name, query in BOMBS.items():
        for path, run, warm in (
            ("run_sql", lambda q=query: run_sql({"t": frame}, q, LIMITS),
             lambda: run_sql({"t": frame}, "SELECT 1 AS x FROM t", LIMITS)),
            ("Table.sql", lambda q=query: table.sql(q, timeout_s=LIMITS.seconds),
             lambda: table.sql("SELECT 1 AS x FROM t")),
        ):  # fmt: skip
            r = bomb(run, warm)
            print(
                f"| {name} | {path} | {r['s']:.2f} | {r['error']} | "
                f"{r['worker_mib']:.0f} | {r['caller_mib']:.0f} |"
            )
    set_table_sql_limits(None)
    print()
    figures = latency(args.repeat, args.skip_large)
    print("| query | median ms |")
    print("|---|---|")
    for name, ms in figures.items():
        print(f"| {name} | {ms:.2f} |")
    base = figures["direct DuckDB cursor, 100 rows (baseline)"]
    small = figures["Table.sql, 100 rows, repeated query"]
    print(f"\nTable.sql / direct at 100 rows: {small / base:.2f}x")
    if not args.skip_large:
        big_base = figures["direct DuckDB cursor, 1,000,000 rows (baseline)"]
        big = figures["Table.sql, 1,000,000 rows, repeated query"]
        print(f"Table.sql / direct at 1,000,000 rows: {big / big_base:.2f}x")
    print(f"first Table.sql of a process, extra ms (worker start): {first_query_ms():.0f}")


if __name__ == "__main__":
    main()
