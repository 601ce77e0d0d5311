"""Column types inferred on the benchmark data and on public tables, and the text they keep.

    .venv/bin/python benchmarks/bench_column_types.py [--data ../shared/data] [--out FILE]

For every WikiTQ table (each CSV under ``wikitq/csv``) and every distinct table of the
TabFact and TabMWP splits, and for five public tables (vega-datasets), counts the
columns of each type and the share typed as numbers (integer, decimal) or dates (date,
timestamp), and checks that typing changed no cell's text (the rows and the PIPE view
read before and after the types are decided are equal). For the public tables it also
compares the inferred types with the dtypes pandas' ``read_csv``/``read_json`` chose.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tablereason.datasets.loader import load_dataset
from tablereason.table import Table
from tablereason.table.io.load import load_table
from tablereason.table.types import from_pandas_dtype

NUMBERS = ("integer", "decimal")
DATES = ("date", "timestamp")
PUBLIC = ("seattle-weather.csv", "stocks.csv", "airports.csv", "cars.json", "iris.json")


def _typed(table: Table, counts: Counter[str]) -> int:
    """Count the table's column types; return how many cells' text typing changed."""
    before = (table.rows(), table.to_pipe())
    types = table.types
    counts.update(types.values())
    after = (table.rows(), table.to_pipe())
    if after == before:
        return 0
    return (
        sum(
            a != b
            for r, s in zip(before[0], after[0], strict=True)
            for a, b in zip(r, s, strict=True)
        )
        or 1
    )


def _shares(counts: Counter[str]) -> dict[str, Any]:
    total = sum(counts.values())
    return {
        "columns": total,
        "types": dict(sorted(counts.items())),
        "numbers": round(sum(counts[k] for k in NUMBERS) / total, 4) if total else 0.0,
        "dates": round(sum(counts[k] for k in DATES) / total, 4) if total else 0.0,
    }


def bench_dataset(name: str, data: Path) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    changed = tables = 0
    started = time.perf_counter()
    if name == "wikitq":
        for path in sorted((data / "wikitq" / "csv").rglob("*.csv")):
            changed += _typed(Table.from_csv(path), counts)
            tables += 1
    else:
        seen: set[str] = set()
        splits = {"tabfact": ["test"], "tabmwp": ["test", "dev1k"]}[name]
        for split in splits:
            for example in load_dataset(name, split, data_dir=data):
                source = example.table_source
                if source is None:
                    continue
                key = hashlib.sha256(
                    json.dumps([source.path, source.header, source.rows]).encode()
                ).hexdigest()
                if key in seen:
                    continue
                seen.add(key)
                assert example.table is not None
                changed += _typed(example.table, counts)
                tables += 1
    return {
        "tables": tables,
        **_shares(counts),
        "cells_changed": changed,
        "seconds": round(time.perf_counter() - started, 1),
    }


def bench_public() -> dict[str, Any]:
    import pandas as pd
    import vega_datasets

    folder = Path(vega_datasets.__file__).parent / "_data"
    out: dict[str, Any] = {}
    counts: Counter[str] = Counter()
    agree = total = 0
    for name in PUBLIC:
        path = folder / name
        table = load_table(path)
        changed = _typed(table, counts)
        frame = pd.read_csv(path) if name.endswith(".csv") else pd.read_json(path)
        theirs = {str(c): from_pandas_dtype(frame[c].dtype) or "text" for c in frame.columns}
        ours = table.types
        same = {c: ours.get(c) == theirs[c] for c in theirs}
        agree += sum(same.values())
        total += len(same)
        out[name] = {
            "rows": table.num_rows,
            "types": ours,
            "pandas": theirs,
            "cells_changed": changed,
        }
    return {"tables": out, **_shares(counts), "agree_with_pandas": f"{agree}/{total}"}


def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = Path(
        os.environ.get(
            "TABLEREASON_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"
        )
    )
    parser.add_argument("--data", type=Path, default=default)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    result = {name: bench_dataset(name, args.data) for name in ("wikitq", "tabfact", "tabmwp")}
    result["public"] = bench_public()
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text)
    return result


if __name__ == "__main__":
    main()
