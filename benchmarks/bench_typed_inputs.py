"""Typed inputs on large tables: NULL, Parquet and join questions; load and ask against a revision.

    .venv/bin/python benchmarks/bench_typed_inputs.py questions [--rows 1000000]
    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/bench_typed_inputs.py \
        memory --before <git revision> [--rows 1000000] [--mb 200] [--repeat 2]

``questions``: the synthetic orders table of ``benchmarks/large_table_questions.py`` with
missing cells (3% of regions, 5% of unit counts blank), read from a CSV and from the same
table written as Parquet by DuckDB; questions about missing values go through
Chain-of-Table with the scripted right decisions (read off the final prompt, as
``bench_large_tables.py correct`` does), and questions joining it with a table of
regions go through ``text_to_sql`` with the right query scripted. Every answer is
compared with gold computed in pandas.

``memory``: in fresh processes, the load time and peak memory (``VmHWM`` above the
baseline after imports) of ``load_table`` on the 1,000,000-row orders CSV, on the same
table as Parquet (both trees), and of ``ask`` (Chain-of-Table, scripted model) on the 200 MB
WikiTQ-like CSV of ``bench_memory.py``; each at ``--before`` (a clean git worktree) and
in this tree, interleaved, ``--repeat`` times; medians and their ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
import bench_large_tables as L
import bench_memory as M
import large_table_questions as Q

from tablereason.api import ask, load_table
from tablereason.llm import ScriptedLLM
from tablereason.table import Table

REGIONS = pd.DataFrame(
    {
        "region": Q.REGIONS,
        "manager": ["Ada", "Bo", "Ada", "Cy", "Di", "Bo"],
        "target": [150000, 90000, 120000, 80000, 60000, 30000],  # an integer dtype
    }
)


def orders_with_gaps(n: int) -> pd.DataFrame:
    """:func:`large_table_questions.orders` with blank regions (3%) and unit counts (5%)."""
    frame = Q.orders(n)
    rng = np.random.default_rng(7)
    frame.loc[rng.random(n) < 0.03, "region"] = ""
    frame.loc[rng.random(n) < 0.05, "units"] = ""
    return frame


def _units(f: pd.DataFrame) -> pd.Series:
    return pd.to_numeric(f.units.replace("", None), errors="coerce")


def null_questions() -> list[Q.Question]:
    """Questions whose answers depend on missing cells being NULL."""
    t = "orders"
    no_region = lambda f: f.region == ""  # noqa: E731
    return [
        Q.Question(t, "how many orders have no region?",
                   " f_select_row(where region IS NULL) -> <END>", ("count",),
                   lambda f: Q.count(no_region(f))),
        Q.Question(t, "how many orders have a unit count?",
                   " f_select_row(where units IS NOT NULL) -> <END>", ("count",),
                   lambda f: Q.count(f.units != "")),
        Q.Question(t, "how many units were sold in the north region?",
                   " f_select_row(where region = 'north') -> <END>", ("sum", "units"),
                   lambda f: _units(f)[f.region == "north"].sum()),
        Q.Question(t, "what is the highest price of an order without a unit count?",
                   " f_select_row(where units IS NULL) -> <END>", ("max", "price"),
                   lambda f: Q.num(f, "price")[f.units == ""].max()),
        Q.Question(t, "how many returned orders have no region?",
                   " f_select_row(where region IS NULL AND status = 'returned') -> <END>",
                   ("count",), lambda f: Q.count(no_region(f) & (f.status == "returned"))),
        Q.Question(t, "how many orders of 2019 count 50 units, a missing count as 0?",
                   " f_select_row(where year(order_date) = 2019 AND coalesce(units, 0) = 50)"
                   " -> <END>", ("count",),
                   lambda f: Q.count((pd.to_datetime(f.order_date).dt.year == 2019)
                                     & (_units(f).fillna(0) == 50))),
        Q.Question(t, "how many orders were placed in march 2018?",
                   " f_add_column(month = date_trunc('month', order_date)) -> "
                   "f_select_row(where month = make_date(2018, 3, 1)) -> <END>", ("count",),
                   lambda f: Q.count(f.order_date.str.startswith("2018-03"))),
    ]  # fmt: skip


def join_questions() -> list[tuple[str, str, Any]]:
    """(question, the query after ``SELECT``, gold from the two frames)."""

    def joined(f: pd.DataFrame) -> pd.DataFrame:
        return f.merge(REGIONS, on="region")

    def top_manager(f: pd.DataFrame) -> str:
        counts = joined(f)[lambda j: j.status == "returned"].manager.value_counts()
        return str(counts.index[0])

    return [
        ("which manager's regions returned the most orders?",
         " r.manager FROM orders AS o JOIN regions AS r USING (region) WHERE o.status = "
         "'returned' GROUP BY r.manager ORDER BY count(*) DESC LIMIT 1;", top_manager),
        ("how many orders came from regions Ada manages?",
         " count(*) FROM orders AS o JOIN regions AS r ON o.region = r.region WHERE "
         "r.manager = 'Ada';", lambda f: int((joined(f).manager == "Ada").sum())),
        ("what did shipped orders in regions with a target above 100000 cost in all?",
         " round(sum(o.price), 2) FROM orders AS o JOIN regions AS r USING (region) WHERE "
         "r.target > 100000 AND o.status = 'shipped';",
         lambda f: round(float(Q.num(j := joined(f), "price")[
             (pd.to_numeric(j.target) > 100000) & (j.status == "shipped")].sum()), 2)),
        ("how many units did orders without a region count?",
         " sum(units) FROM orders WHERE region IS NULL;",
         lambda f: int(_units(f)[f.region == ""].sum())),
    ]  # fmt: skip


def write_parquet(csv: Path, parquet: Path) -> None:
    """The CSV as Parquet, typed by DuckDB's reading of it (blank cells NULL)."""
    with duckdb.connect() as conn:
        conn.execute(
            "COPY (SELECT * FROM read_csv(?, header = true)) TO '" + str(parquet) + "'",
            [str(csv)],
        )


def bench_questions(rows: int) -> dict[str, Any]:
    frame = orders_with_gaps(rows)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        csv, parquet = Path(folder) / "orders.csv", Path(folder) / "orders.parquet"
        frame.to_csv(csv, index=False)
        write_parquet(csv, parquet)
        regions = Table.from_pandas(REGIONS)
        for path in (csv, parquet):
            started = time.perf_counter()
            table = load_table(path)
            load_s = time.perf_counter() - started
            print(f"{path.name}: {table.num_rows} rows in {load_s:.1f} s, types {table.types}")
            for result in L.run_questions({"orders": (table, frame)}, null_questions()):
                results.append({"input": path.suffix, "load_s": round(load_s, 1), **result})
            for text, query, gold in join_questions():
                llm = ScriptedLLM(fn=lambda request, q=query: q)
                started = time.perf_counter()
                prediction = ask({"orders": table, "regions": regions}, text,
                                 method="text_to_sql", llm=llm)  # fmt: skip
                seconds = time.perf_counter() - started
                answer = prediction.answer[0] if prediction.answer else ""
                expected = gold(frame)
                ok = prediction.error is None and L.matches(str(answer), expected)
                mark = "ok " if ok else "BAD"
                print(f"{mark} join {path.suffix} {text} -> {answer} [{expected}]")
                results.append({"input": path.suffix, "question": text, "answer": answer,
                                "gold": expected, "exact": ok, "seconds": round(seconds, 2),
                                "method": "text_to_sql"})  # fmt: skip
    summary = {"rows": rows, "exact": sum(r["exact"] for r in results), "questions": len(results)}
    print(json.dumps(summary))
    return {"summary": summary, "runs": results}


# ----------------------------------------------------------------------------- memory


def _child(mode: str, path: str) -> None:
    """One measured run in this process: load or ask, printed as JSON."""
    import tablereason.api as api
    import tablereason.methods.chain_of_table  # noqa: F401 - imported before the baseline

    baseline = M._rss_bytes()
    started = time.perf_counter()
    if mode == "load":
        rows = api.load_table(path).num_rows
    else:
        prediction = api.ask(path, M.QUESTION, llm=M._scripted())  # type: ignore[arg-type]
        rows = prediction.tables[0].num_rows
    seconds = time.perf_counter() - started
    print(json.dumps({"rows": rows, "seconds": seconds, "growth": _high_water() - baseline}))


def _high_water() -> int:
    """This process's peak resident memory, in bytes (``VmHWM``).

    Not ``ru_maxrss``, which Linux carries over ``exec`` from the parent: the parent here
    has held the whole orders frame.
    """
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def _measure(tree: Path, mode: str, path: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, __file__, "child", "--mode", mode, "--path", str(path)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"{mode} {path.name} at {tree} failed:\n{out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def bench_memory(before: str, rows: int, mb: float, repeat: int) -> dict[str, Any]:
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        old = tmp / "before"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(old), before],
                       check=True, capture_output=True)  # fmt: skip
        try:
            csv, parquet, big = tmp / "orders.csv", tmp / "orders.parquet", tmp / "big.csv"
            Q.orders(rows).to_csv(csv, index=False)
            write_parquet(csv, parquet)
            M.write_csv(big, int(mb * 1e6))
            sizes = {p.name: p.stat().st_size for p in (csv, parquet, big)}
            cases = [("before", old, "load", csv), ("after", root, "load", csv),
                     ("before", old, "load", parquet), ("after", root, "load", parquet),
                     ("before", old, "ask", big), ("after", root, "ask", big)]  # fmt: skip
            runs: dict[str, list[dict[str, Any]]] = {}
            for _ in range(repeat):
                for label, tree, mode, path in cases:
                    key = f"{label} {mode} {path.name}"
                    runs.setdefault(key, []).append(_measure(tree, mode, path))
                    print(key, runs[key][-1], flush=True)
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(old)],
                           check=False, capture_output=True)  # fmt: skip
    medians = {
        key: {
            "seconds": round(statistics.median(r["seconds"] for r in found), 2),
            "growth_mb": round(statistics.median(r["growth"] for r in found) / 1e6, 1),
            "rows": found[0]["rows"],
        }
        for key, found in runs.items()
    }
    for key, figures in medians.items():
        figures["growth_over_file"] = round(figures["growth_mb"] * 1e6 / sizes[key.split()[-1]], 2)
    parquet, csv_after = medians["after load orders.parquet"], medians["after load orders.csv"]
    ratios = {
        "load csv after/before (time, memory)": _ratio(medians, "load orders.csv"),
        "ask big.csv after/before (time, memory)": _ratio(medians, "ask big.csv"),
        "load parquet after/before (time, memory)": _ratio(medians, "load orders.parquet"),
        "parquet/csv before (time, memory)": (
            round(
                medians["before load orders.parquet"]["seconds"]
                / medians["before load orders.csv"]["seconds"],
                2,
            ),
            round(
                medians["before load orders.parquet"]["growth_mb"]
                / medians["before load orders.csv"]["growth_mb"],
                2,
            ),
        ),
        "parquet/csv after (time, memory)": (
            round(parquet["seconds"] / csv_after["seconds"], 2),
            round(parquet["growth_mb"] / csv_after["growth_mb"], 2),
        ),
    }
    result = {"sizes": sizes, "medians": medians, "ratios": ratios, "repeat": repeat}
    print(json.dumps(result, indent=1))
    return result


def _ratio(medians: dict[str, dict[str, Any]], what: str) -> tuple[float, float]:
    after, before = medians[f"after {what}"], medians[f"before {what}"]
    return (
        round(after["seconds"] / before["seconds"], 2),
        round(after["growth_mb"] / before["growth_mb"], 2),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["questions", "memory", "child"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--before", default="HEAD")
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.what == "child":
        _child(args.mode, args.path)
        return
    if args.what == "questions":
        result = bench_questions(args.rows)
    else:
        result = bench_memory(args.before, args.rows, args.mb, args.repeat)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
