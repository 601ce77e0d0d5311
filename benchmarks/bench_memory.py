"""Memory benchmark: peak memory of loading a large CSV and of ``tablereason ask`` on it.

Run:  python benchmarks/bench_memory.py [--mb 200] [--modes from_csv,load_table,ask,cli]

Writes a CSV of the given size (WikiTQ-like cells: numbers with commas, dates, names,
short notes), then runs each mode in a fresh child process, so that each peak
(``ru_maxrss``) is measured on its own:

- ``from_csv``: ``Table.from_csv`` (the streaming baseline).
- ``load_table``: ``tablereason.load_table`` (what ``ask`` and the CLI read files with).
- ``ask``: ``tablereason.ask`` with Chain-of-Table and a scripted model (no model needed):
  the plan ends at once and the answer is fixed, so what is measured is loading plus the
  method's own handling of the table.
- ``cli``: ``tablereason ask FILE QUESTION`` through the command's ``main`` with the same
  scripted model, printing the trace (to a null stream) as the command does.

For each mode it reports the resident memory after imports (the baseline), the peak, the
peak growth over the baseline and that growth as a multiple of the file size. Prints a
Markdown report.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NATIONS = ["Norway", "Germany", "Canada", "Austria", "Russia", "United States", "Finland", "Italy"]
NOTES = ["", "host", "(tie)", "new record", "see the 1998 edition", "results annulled in 2004"]
MODES = ("from_csv", "load_table", "ask", "cli")
QUESTION = "which nation has the most gold?"


def write_csv(path: Path, size_bytes: int, seed: int = 11) -> int:
    """Write a WikiTQ-like CSV of about ``size_bytes``; returns its row count."""
    rng = random.Random(seed)
    rows = 0
    written = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        header = "Rank,Nation,Gold,Silver,Total,Date,Venue,Notes\n"
        handle.write(header)
        written += len(header)
        lines: list[str] = []
        while written < size_bytes:
            gold, silver = rng.randint(0, 20000), rng.randint(0, 50)
            line = (
                f'{rows + 1},{rng.choice(NATIONS)},"{gold:,}",{silver},{gold + silver},'
                f"{rng.randint(1, 28)} March {rng.randint(1950, 2020)},"
                f"Stadium {rng.randint(1, 500)},{rng.choice(NOTES)}\n"
            )
            lines.append(line)
            written += len(line)
            rows += 1
            if len(lines) >= 10_000:
                handle.write("".join(lines))
                lines = []
        handle.write("".join(lines))
    return rows


def _rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _scripted() -> object:
    from tablereason.llm import ScriptedLLM

    return ScriptedLLM(fn=lambda request: "<END>" if "f_" in request.as_text() else "Norway")


def child(mode: str, path: str) -> None:
    """Run one mode in this process and print its figures as JSON."""
    import tablereason.api as api
    import tablereason.cli as cli
    import tablereason.llm.resolve as resolve
    import tablereason.methods.chain_of_table  # noqa: F401 - imported before the baseline
    from tablereason.table import Table

    llm = _scripted()
    baseline = _rss_bytes()
    start = time.perf_counter()
    answer: object = None
    if mode == "from_csv":
        rows = Table.from_csv(path, escape=None).num_rows
    elif mode == "load_table":
        rows = api.load_table(path).num_rows
    elif mode == "ask":
        prediction = api.ask(path, QUESTION, llm=llm)  # type: ignore[arg-type]
        rows, answer = prediction.tables[0].num_rows, prediction.answer
    elif mode == "cli":
        resolve.resolve_llm = lambda *args, **kwargs: llm  # type: ignore[assignment]
        real_stdout = sys.stdout
        with open(os.devnull, "w") as sink:
            sys.stdout = sink
            try:
                code = cli.main(["ask", path, QUESTION])
            finally:
                sys.stdout = real_stdout
        rows, answer = -1, code
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = {"mode": mode, "baseline": baseline, "peak": peak, "seconds": seconds}
    print(json.dumps({**result, "rows": rows, "answer": answer}))


def measure(mode: str, path: Path) -> dict[str, object]:
    """Run ``mode`` in a fresh interpreter and return its figures."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{out.stderr[-3000:]}")
    figures: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0, help="CSV size in MB (10^6 bytes)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.csv"
        rows = write_csv(path, int(args.mb * 1e6))
        size = path.stat().st_size
        print(f"CSV: {size / 1e6:.1f} MB, {rows:,} rows, 8 columns\n")
        print("| mode | baseline MB | peak MB | growth MB | growth / file | s |")
        print("|---|---|---|---|---|---|")
        for mode in args.modes.split(","):
            f = measure(mode, path)
            base, peak = int(f["baseline"]), int(f["peak"])  # type: ignore[call-overload]
            print(
                f"| {mode} | {base / 1e6:.0f} | {peak / 1e6:.0f} | {(peak - base) / 1e6:.0f} "
                f"| {(peak - base) / size:.2f}x | {float(f['seconds']):.1f} |",  # type: ignore[arg-type]
                flush=True,
            )


if __name__ == "__main__":
    main()
