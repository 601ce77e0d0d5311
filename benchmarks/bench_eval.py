"""Evaluation harness benchmark: overhead per example, and throughput against a slow server.

Run: python benchmarks/bench_eval.py [--data-dir ../shared/data] [--examples 2000]

1. Harness overhead: run_evaluation over synthetic WikiTQ-style examples with a method
   that answers at once (scoring with the official WikiTQ metric, a trace per record,
   one fsynced JSON line per example). Target: under 5 ms per example.
2. Throughput: the fake OpenAI-compatible server (its own process, 100 ms per reply)
   at concurrency 16, through the full model stack (cache, retry, limit), compared
   with the ideal requests * 0.1 s / 16. Target: at least 85% of ideal.
   The default transport for a self-hosted server (the lean JSON one) and the
   ``openai`` package are measured in the same run.
   a) a method making one request per example;
   b) Chain-of-Table on real WikiTQ examples (the fake replies end each chain at once,
      so each example makes two requests: plan and answer).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from fake_server import spawn  # noqa: E402

from tablereason.datasets import Example  # noqa: E402
from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark  # noqa: E402
from tablereason.evaluate.results import read_results  # noqa: E402
from tablereason.evaluate.runner import run_evaluation  # noqa: E402
from tablereason.llm import (  # noqa: E402
    OpenAIChat,
    Request,
    Usage,
    resolve_llm,
)
from tablereason.llm.backends.server.chat import Transport  # noqa: E402
from tablereason.trace import Prediction, Trace, TraceStep  # noqa: E402


def synthetic(n: int) -> list[Example]:
    return [
        Example(
            dataset="wikitq",
            id=f"ex-{i}",
            question=f"what is the value in row {i}?",
            answer=[str(i)],
            metadata={"target_canon": [f"{i}.0"], "target_canon_type": "number"},
        )
        for i in range(n)
    ]


def instant(example: Example) -> Prediction:
    trace = Trace(method="instant", question=example.question)
    trace.add(
        TraceStep(
            kind="answer",
            name="final",
            raw=[example.answers[0]],
            usage=Usage(prompt_tokens=100, completion_tokens=2),
        )
    )
    return Prediction(answer=[example.answers[0]], trace=trace)


def bench_overhead(n: int) -> None:
    print(f"\n## Harness overhead: {n} examples, instant method")
    for concurrency, sync in ((1, 0.0), (8, 0.0), (1, 0.05), (8, 0.05)):
        with tempfile.TemporaryDirectory() as tmp:
            examples = synthetic(n)
            start = time.perf_counter()
            summary = run_evaluation(
                instant,
                examples,
                Path(tmp) / "r.jsonl",
                metric="wikitq_accuracy",
                concurrency=concurrency,
                progress=False,
                sync_interval_s=sync,
            )
            took = time.perf_counter() - start
            assert summary.result is not None and summary.result.score == 1.0
            mode = "fsync every record" if sync == 0 else f"fsync every {sync * 1000:.0f} ms"
            print(
                f"concurrency {concurrency}, {mode:20}: {took:.2f} s -> "
                f"{1000 * took / n:.3f} ms per example (target < 5 ms)"
            )


def bench_one_request(
    url: str, n: int, concurrency: int, latency: float, transport: Transport
) -> None:
    ideal = n * latency / concurrency
    print(
        f"\n## a) one request per example: {n} examples, concurrency {concurrency}, "
        f"transport={transport}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        llm = resolve_llm(
            OpenAIChat("fake", base_url=url, transport=transport),
            cache=Path(tmp) / "c.sqlite",
            max_concurrency=concurrency,
        )

        def method(example: Example) -> Prediction:
            completion = llm.complete(Request(prompt=example.question, max_tokens=8))
            return Prediction(answer=[completion.text])

        warm = synthetic(concurrency)
        run_evaluation(
            method, warm, Path(tmp) / "warm.jsonl", concurrency=concurrency, progress=False
        )
        # the ceiling on this machine: the same model stack at the same concurrency, no harness
        requests = [Request(prompt=f"bare {i}", max_tokens=8) for i in range(n)]
        with ThreadPoolExecutor(concurrency) as pool:
            start = time.perf_counter()
            list(pool.map(llm.complete, requests))
            bare = time.perf_counter() - start
        print(f"model stack alone: {bare:.3f} s -> {ideal / bare:.1%} of ideal")
        examples = [e.model_copy(update={"question": f"q {e.id} new"}) for e in synthetic(n)]
        cpu = time.process_time()
        start = time.perf_counter()
        run_evaluation(
            method,
            examples,
            Path(tmp) / "r.jsonl",
            metric="wikitq_accuracy",
            concurrency=concurrency,
            progress=False,
            sync_interval_s=0.05,
        )
        took = time.perf_counter() - start
        cpu = time.process_time() - cpu
    print(
        f"with the harness: {took:.3f} s -> {ideal / took:.1%} of ideal (target >= 85%); "
        f"{bare / took:.1%} of the model stack alone; CPU {1000 * cpu / n:.2f} ms per example"
    )


def bench_chain_of_table(url: str, data_dir: str, n: int, concurrency: int, latency: float) -> None:
    print(f"\n## b) Chain-of-Table on {n} WikiTQ test examples, concurrency {concurrency}")
    with tempfile.TemporaryDirectory() as tmp:
        spec = BenchmarkSpec(
            dataset="wikitq",
            out=tmp,
            limit=n,
            data_dir=data_dir,
            model="fake",
            base_url=url,
            concurrency=concurrency,
        )
        # warm-up: build the examples' tables once (DuckDB), outside the timing
        from tablereason.datasets import load_dataset

        for example in load_dataset("wikitq", data_dir=data_dir, limit=n):
            assert example.table is not None
        cpu = time.process_time()
        start = time.perf_counter()
        summary = run_benchmark(spec, progress=False)
        took = time.perf_counter() - start
        cpu = time.process_time() - cpu
        _, records, _ = read_results(summary.path)
    requests = sum(r["requests"] for r in records)
    ideal = requests * latency / concurrency
    print(
        f"{requests} requests; took {took:.3f} s, ideal {ideal:.3f} s -> {ideal / took:.1%} of "
        f"ideal; {summary.failed} failed; CPU {1000 * cpu / n:.1f} ms per example"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=480)
    parser.add_argument("--cot-examples", type=int, default=160)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("TABLEREASON_DATA_DIR", str(ROOT.parent / "shared" / "data")),
    )
    args = parser.parse_args()
    print(
        f"# bench_eval on {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs"
    )
    bench_overhead(args.examples)
    proc, url = spawn(args.latency)
    try:
        for transport in ("http", "openai"):  # "http" is what "auto" picks for this server
            bench_one_request(url, args.requests, args.concurrency, args.latency, transport)
        bench_chain_of_table(url, args.data_dir, args.cot_examples, args.concurrency, args.latency)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
