"""Where model-written row expressions run: the process's database, or the SQL worker.

    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/bench_row_expressions.py \
        --rows 1000000

On the synthetic orders table (benchmarks/large_table_questions.py), each step of a
large-table chain that evaluates an expression is timed two ways: as the operations run
it (``filter_rows`` and ``add_column`` in the process's own database, bounded as
docs/security.md describes), and as it would run in the SQL worker pool, which holds only
the tables sent to it: the table (its display names and cells, as ``Table.sql`` sends it)
goes to a worker and the same condition runs there. A chain's tables differ from step to
step (a filter changes the rows), so each step sends its table once; the second query on
the same table is timed too (the worker keeps it). Best of ``--repeat``; each fresh table
leaves out a different number of first rows, so that the worker has not seen it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import large_table_questions as Q

from tablereason.table import Table

STEPS = [
    ("filter", "status = 'returned'", "SELECT count(*) FROM t WHERE status = 'returned'"),
    (
        "filter on a date",
        "year(CAST(order_date AS DATE)) = 2019 AND region = 'islands'",
        "SELECT count(*) FROM t WHERE year(CAST(order_date AS DATE)) = 2019 "
        "AND region = 'islands'",
    ),
    (
        "computed column",
        "year(order_date)",
        "SELECT max(length(CAST(year(CAST(order_date AS DATE)) AS VARCHAR))) FROM t",
    ),
]


def best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    table = Table.from_pandas(Q.orders(args.rows))
    filtered = table.apply("filter_rows", condition="region <> 'central'")  # a chain's table
    results = []
    fresh_tables = iter(range(1, 1000))
    for name, expression, query in STEPS:
        if name == "computed column":
            here = best(lambda e=expression: table.apply("add_column", name="y", expression=e), 1)
        else:
            here = best(lambda e=expression: table.apply("filter_rows", condition=e), args.repeat)
        fresh = []
        for _ in range(args.repeat):  # a table the worker has not seen: sent, then queried
            copy = filtered.select_rows(range(next(fresh_tables), filtered.num_rows))
            start = time.perf_counter()
            copy.sql(query, timeout_s=60)
            fresh.append(time.perf_counter() - start)
        again = best(lambda q=query: filtered.sql(q, timeout_s=60), args.repeat)
        row = {
            "step": name,
            "main database s": round(here, 3),
            "worker, table sent s": round(min(fresh), 3),
            "worker, table kept s": round(again, 3),
        }
        results.append(row)
        print(json.dumps(row))
    summary = {"rows": args.rows, "results": results}
    if args.out:
        args.out.write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
