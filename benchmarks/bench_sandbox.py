"""Sandbox throughput and latency: warm fork-server pool against a fresh interpreter per program.

Run: python benchmarks/bench_sandbox.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from tablereason.sandbox import Limits, PythonSandbox, active_layers

SMALL = [
    "ans = sum([3, 4, 5]) / 3",
    "from fractions import Fraction\nans = Fraction(3, 4) - Fraction(1, 8)",
    "rows = [['a', 3], ['b', 9], ['c', 4]]\nans = max(rows, key=lambda r: r[1])[0]",
    "import statistics\nans = statistics.median([7, 1, 3, 9])",
]
PANDAS = "ans = float(df['score'].mean())"
PANDAS_FRESH = (
    "import pandas as pd\ndf = pd.DataFrame({'score': [3, 9, 4]})\nans = float(df['score'].mean())"
)
TABLE = pd.DataFrame({"name": ["a", "b", "c"], "score": [3, 9, 4]})


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def fresh(code: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-I", "-c", code + "\nprint(repr(ans))"],
        env={"OPENBLAS_NUM_THREADS": "1"},
        capture_output=True,
        check=True,
        cwd="/",
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    n_small, n_pandas, n_fresh, n_throughput = (
        (60, 30, 10, 120) if args.quick else (300, 150, 40, 600)
    )
    print(f"python {platform.python_version()}, {platform.system()} {platform.release()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")  # fmt: skip

    # Fresh interpreter per program (no sandbox layers at all: a lower bound for that design).
    fresh_small = [fresh(SMALL[i % len(SMALL)]) for i in range(n_fresh)]
    fresh_pandas = [fresh(PANDAS_FRESH) for _ in range(max(5, n_fresh // 4))]
    t0 = time.perf_counter()
    for i in range(n_fresh):
        fresh(SMALL[i % len(SMALL)])
    fresh_rate = n_fresh / (time.perf_counter() - t0)

    with PythonSandbox(workers=2) as box:
        layers = active_layers(box)
        print("active layers:", ", ".join(k for k, v in layers.items() if v))
        print("inactive layers:", ", ".join(k for k, v in layers.items() if not v) or "none")
        for code in SMALL:  # warm up both servers
            box.run(code)
        warm_small = [box.run(SMALL[i % len(SMALL)]).duration for i in range(n_small)]
        warm_pandas = [box.run(PANDAS, {"df": TABLE}).duration for _ in range(n_pandas)]
        idle_small, idle_pandas = [], []
        for i in range(n_pandas):  # caller idle 20 ms between programs, as between model calls
            time.sleep(0.02)
            idle_small.append(box.run(SMALL[i % len(SMALL)]).duration)
            time.sleep(0.02)
            idle_pandas.append(box.run(PANDAS, {"df": TABLE}).duration)
        with ThreadPoolExecutor(max_workers=4) as pool:
            t0 = time.perf_counter()
            results = list(pool.map(lambda i: box.run(SMALL[i % len(SMALL)]), range(n_throughput)))
            warm_rate = n_throughput / (time.perf_counter() - t0)
        assert all(r.error is None for r in results)
        mixed = [box.run(PANDAS, {"df": TABLE}) if i % 4 == 0 else box.run(SMALL[i % 4])
                 for i in range(n_small)]  # fmt: skip
        bomb = box.run("blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 2**20))",
                       limits=Limits(memory_bytes=512 * 2**20), python_layers=False)  # fmt: skip
        loop = box.run("while True:\n    pass", limits=Limits(wall_seconds=1.0, cpu_seconds=1.0))
        sleeper = box.run("import time\ntime.sleep(60)", limits=Limits(wall_seconds=1.0))

    print()
    print("| measure | warm pool | fresh interpreter | ratio |")
    print("|---|---|---|---|")
    print(f"| small programs/s (2 workers, 4 callers) | {warm_rate:.0f} | {fresh_rate:.1f} | "
          f"{warm_rate / fresh_rate:.1f}x |")  # fmt: skip
    for label, warm, cold in (
        ("small program, back to back", warm_small, fresh_small),
        ("pandas program, back to back", warm_pandas, fresh_pandas),
    ):
        ratio = median_ms(cold) / median_ms(warm)
        print(f"| median latency, {label} | {median_ms(warm):.1f} ms | "
              f"{median_ms(cold):.1f} ms | {ratio:.1f}x |")  # fmt: skip
    print(f"| median latency, small program, caller idle 20 ms between | "
          f"{median_ms(idle_small):.1f} ms | | |")  # fmt: skip
    print(f"| median latency, pandas program, caller idle 20 ms between | "
          f"{median_ms(idle_pandas):.1f} ms | | |")  # fmt: skip
    mix_ms = median_ms([r.duration for r in mixed])
    p90_ms = sorted(warm_small)[int(0.9 * n_small)] * 1000
    print(f"| median latency, mix (1 in 4 pandas) | {mix_ms:.1f} ms | | |")
    print(f"| p90 latency, small program | {p90_ms:.1f} ms | | |")
    print()
    print("| runaway program | limit | stopped after | error |")
    print("|---|---|---|---|")
    print(f"| memory bomb (50 MiB blocks) | 512 MiB | {bomb.duration:.2f} s | {bomb.error} |")
    print(f"| infinite loop | 1 s CPU / 1 s wall | {loop.duration:.2f} s | {loop.error} |")
    print(f"| sleep(60) | 1 s wall | {sleeper.duration:.2f} s | {sleeper.error} |")


if __name__ == "__main__":
    main()
