"""Table benchmark: operation latency at 100 and 1,000,000 rows, chain replay, memory.

Run:  python benchmarks/bench_table.py [--rows 1000000] [--chain-rows 100000] [--repeat 30]

Prints a Markdown report. The 1,000,000-row part runs in a child process so
that its peak memory (ru_maxrss) is measured on its own.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tablereason import Table

NATIONS = ["Norway", "Germany", "Canada", "Austria", "Russia", "United States", "Finland", "Italy"]


def wikitq_like(n: int, seed: int = 7) -> tuple[list[str], list[list[str]]]:
    """A medal-table-like table: ranks, names, counts with commas, dates, empty cells."""
    rng = random.Random(seed)
    header = ["Rank", "Nation", "Gold", "Silver", "Total", "Date", "Notes"]
    rows = []
    for i in range(n):
        gold, silver = rng.randint(0, 2000), rng.randint(0, 50)
        rows.append(
            [
                str(i + 1),
                rng.choice(NATIONS),
                f"{gold:,}",
                str(silver),
                str(gold + silver),
                f"{rng.randint(1, 28)} March {rng.randint(1950, 2020)}",
                rng.choice(["", "host", "(tie)", "new record"]),
            ]
        )
    return header, rows


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def operations(table: Table, n: int) -> dict[str, Callable[[], object]]:
    rng = random.Random(1)
    half = sorted(rng.sample(range(n), n // 2))
    values = [str(i % 13) for i in range(n)]
    return {
        "select_rows (half)": lambda: table.select_rows(half),
        "select_columns": lambda: table.select_columns(["Nation", "Total"]),
        "add_column": lambda: table.add_column("Region", values),
        "sort_by numeric": lambda: table.sort_by("Gold", descending=True, numeric=True),
        "sort_by text": lambda: table.sort_by("Nation", numeric=False),
        "sort_by auto": lambda: table.sort_by("Total"),
        "group_by": lambda: table.group_by("Nation"),
        "lookup_rows": lambda: table.lookup_rows(["canada", "host"]),
        "lookup_columns": lambda: table.lookup_columns(["gold"]),
        "sql": lambda: table.sql('SELECT "Nation", count(*) AS n FROM t GROUP BY "Nation"'),
        "to_pipe (all rows)": lambda: table.to_pipe(max_rows=None if n <= 1000 else 100),
        "verbalize (20 rows)": lambda: table.verbalize(max_rows=20),
    }


def fresh(table: Table) -> Table:
    """The same table, built anew (nothing read or written on its behalf yet)."""
    return Table.from_records(table.columns, table.rows())


def read_back(table: Table) -> Table:
    """The same table stored in DuckDB, with no cells held in Python, so reads query DuckDB."""
    copy = fresh(table)
    copy._store.require([copy._base])
    copy._records = None
    return copy


def first_touch(small: Table, repeat: int) -> dict[str, float]:
    """Costs a table pays once: its first SQL query, and reading cells back from DuckDB."""
    query = 'SELECT "Nation", count(*) AS n FROM t GROUP BY "Nation"'
    build = median_ms(lambda: fresh(small), repeat)
    store = median_ms(lambda: read_back(small), repeat)
    derived = small.select_rows(range(0, 100, 2))
    return {
        "sql, first query on a new table (writes it to DuckDB)": median_ms(
            lambda: fresh(small).sql(query), repeat
        )
        - build,
        "sql on a derived table (rows 0, 2, 4, ...), repeated query": median_ms(
            lambda: derived.sql(query), repeat
        ),
        "to_pipe (all rows) read back from DuckDB": median_ms(
            lambda: read_back(small).to_pipe(), repeat
        )
        - store,
    }


# -- the list-of-rows baseline: every step rebuilds from the original --------------------


def _number(cell: str) -> float | None:
    kept, dot = "", False
    for ch in cell:
        if ch.isdigit():
            kept += ch
        elif ch == "." and not dot:
            kept, dot = kept + ch, True
    if cell.strip().startswith("-"):
        kept = "-" + kept
    try:
        return float(kept)
    except ValueError:
        return None


def _apply_list(
    header: list[str], rows: list[list[str]], step: dict
) -> tuple[list[str], list[list[str]]]:
    op, args = step["operation"], step["args"]
    if op == "select_rows":
        keep = set(args["indices"])
        return header, [r for i, r in enumerate(rows) if i in keep]
    if op == "select_columns":
        idx = [i for i, h in enumerate(header) if h in set(args["names"])]
        return [header[i] for i in idx], [[r[i] for i in idx] for r in rows]
    if op == "sort_by":
        i = header.index(args["column"])
        keyed = [(k, r) for r in rows if (k := _number(r[i])) is not None]
        rest = [r for r in rows if _number(r[i]) is None]
        keyed.sort(key=lambda kr: kr[0], reverse=args["descending"])
        return header, [r for _, r in keyed] + rest
    if op == "add_column":
        return [*header, args["name"]], [[*r, v] for r, v in zip(rows, args["values"], strict=True)]
    raise ValueError(op)


def list_baseline(header: list[str], rows: list[list[str]], steps: list[dict]) -> list[list[str]]:
    """Reference design: before each step, replay every earlier step from the original."""
    current = (header, rows)
    for k in range(1, len(steps) + 1):
        current = (header, [list(r) for r in rows])
        for step in steps[:k]:
            current = _apply_list(*current, step)
    return current[1]


def chain_steps(n: int) -> list[dict]:
    rng = random.Random(3)
    keep = sorted(rng.sample(range(n), n // 2))
    return [
        {"operation": "select_rows", "args": {"indices": keep}},
        {
            "operation": "add_column",
            "args": {"name": "Region", "values": [str(i % 9) for i in range(len(keep))]},
        },
        {"operation": "select_columns", "args": {"names": ["Nation", "Gold", "Region"]}},
        {"operation": "sort_by", "args": {"column": "Gold", "descending": True, "numeric": True}},
    ]


# -- the large-table part, in a child process ----------------------------------------------


def large_child(rows: int, repeat: int) -> dict:
    header, body = wikitq_like(1000)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.csv"
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            for i in range(rows):
                row = list(body[i % 1000])
                row[0] = str(i + 1)
                writer.writerow(row)
        size = path.stat().st_size
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        start = time.perf_counter()
        table = Table.from_csv(path)
        load_s = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    ops = operations(table, rows)
    timings = {
        name: median_ms(ops[name], repeat)
        for name in [
            "select_rows (half)",
            "select_columns",
            "sort_by numeric",
            "sort_by text",
            "group_by",
            "lookup_rows",
            "sql",
            "to_pipe (all rows)",
        ]
    }
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "rows": rows,
        "csv_bytes": size,
        "load_s": load_s,
        "load_peak_growth_bytes": after - before,
        "peak_growth_after_ops_bytes": peak - before,
        "ms": timings,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--chain-rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(large_child(args.rows, max(3, args.repeat // 6))))
        return

    header, rows = wikitq_like(100)
    small = Table.from_records(header, rows, caption="medal table")
    print(f"## Table operations ({os.cpu_count()} cores, python {sys.version.split()[0]})\n")
    print("| operation | median ms, 100 rows |")
    print("|---|---|")
    small_ops = operations(small, 100)
    for name, fn in small_ops.items():
        if name == "to_pipe (all rows)":
            ms = median_ms(lambda: fresh(small).to_pipe(), args.repeat) - median_ms(
                lambda: fresh(small), args.repeat
            )
        else:
            ms = median_ms(fn, args.repeat)
        print(f"| {name} | {ms:.2f} |")
    print("\nCosts paid once per table, or off the small-table path (not targets):\n")
    print("| operation | median ms, 100 rows |")
    print("|---|---|")
    for name, ms in first_touch(small, args.repeat).items():
        print(f"| {name} | {ms:.2f} |")

    header, body = wikitq_like(args.chain_rows)
    steps = chain_steps(args.chain_rows)
    base = Table.from_records(header, body)
    start = time.perf_counter()
    ours = base.replay(steps).rows(max_rows=5)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    theirs = list_baseline(header, body, steps)[:5]
    theirs_s = time.perf_counter() - start
    assert ours == theirs, (ours, theirs)
    print(f"\n## Replaying a 4-step chain on {args.chain_rows:,} rows\n")
    print("| implementation | seconds |")
    print("|---|---|")
    print(f"| list of rows, rebuilt from the original at every step | {theirs_s:.3f} |")
    print(f"| Table (DuckDB, lineage) | {ours_s:.3f} |")
    print(f"| speed-up | {theirs_s / ours_s:.1f}x |")

    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            "--rows",
            str(args.rows),
            "--repeat",
            str(args.repeat),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    big = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"\n## {big['rows']:,} rows\n")
    print(f"- CSV size: {big['csv_bytes'] / 1e6:.1f} MB; load: {big['load_s']:.2f} s")
    print(
        f"- peak memory growth while loading: {big['load_peak_growth_bytes'] / 1e6:.1f} MB "
        f"({big['load_peak_growth_bytes'] / big['csv_bytes']:.2f}x the CSV); after the operations: "
        f"{big['peak_growth_after_ops_bytes'] / 1e6:.1f} MB "
        f"({big['peak_growth_after_ops_bytes'] / big['csv_bytes']:.2f}x)"
    )
    print("\n| operation | median ms |")
    print("|---|---|")
    for name, ms in big["ms"].items():
        print(f"| {name} | {ms:.1f} |")


if __name__ == "__main__":
    main()
