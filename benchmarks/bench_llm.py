"""LLM layer benchmark: client throughput against a fake server, cache hits, embedded model.

Run: python benchmarks/bench_llm.py [--skip-model]

1. 500 requests to the fake OpenAI-compatible server (100 ms per reply, run in its own
   process) at concurrency 32, through the full stack (retry + shared limit + usage)
   over each transport (the lean JSON one and the ``openai`` package), with threads
   and with asyncio; compared with the ideal 500 * 0.1 / 32 s and a bare http.client
   baseline in the same run.
2. Cache-hit latency of CachedLLM (and of the full stack on a hit).
3. Embedded Gemma 3 270M: prompt-processing and generation tokens/s, and 8 seeded samples
   of one long prompt (shared prefix evaluated once).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from fake_server import spawn  # noqa: E402

from tablereason.llm import (  # noqa: E402
    CachedLLM,
    ConcurrencyLimit,
    LocalLlama,
    OpenAIChat,
    Request,
    ScriptedLLM,
    UsageTracker,
    stack,
)


def bench_throughput(url: str, requests: int, concurrency: int, latency: float) -> None:
    ideal = requests * latency / concurrency
    print(
        f"\n## Throughput: {requests} requests, {latency * 1000:.0f} ms each, "
        f"concurrency {concurrency} (ideal {ideal:.3f} s)"
    )
    reqs = [Request(prompt=f"question number {i}", max_tokens=16) for i in range(requests)]

    # baseline: bare http.client, one keep-alive connection per thread, no openai, no wrappers
    host, port = url.split("//")[1].split("/")[0].split(":")
    local = threading.local()

    def raw(i: int) -> bytes:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection(host, int(port))
        body = json.dumps({"model": "fake", "prompt": f"question number {i}", "max_tokens": 16})
        conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        return conn.getresponse().read()

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(raw, range(concurrency)))
        start, cpu = time.perf_counter(), time.process_time()
        list(pool.map(raw, range(requests)))
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"baseline (http.client, threads): {took:.3f} s  -> {ideal / took:.1%} of ideal  "
        f"(client CPU {1000 * cpu / requests:.2f} ms per request)"
    )

    for transport in ("http", "openai"):
        bench_stack(url, reqs, concurrency, ideal, transport)


def bench_stack(
    url: str, reqs: list[Request], concurrency: int, ideal: float, transport: str
) -> None:
    """The full stack (usage, retry, shared limit) over one transport, threads and asyncio."""
    requests = len(reqs)
    tracker = UsageTracker()
    chat = OpenAIChat("fake", base_url=url, transport=transport)  # type: ignore[arg-type]
    llm = stack(chat, max_concurrency=concurrency, tracker=tracker)
    with ThreadPoolExecutor(concurrency) as pool:  # warm-up: import, connections
        list(pool.map(llm.complete, reqs[:concurrency]))
        start, cpu = time.perf_counter(), time.process_time()
        outs = list(pool.map(llm.complete, reqs))
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert all(o.text for o in outs)
    print(
        f"transport={transport:<6} threads : {took:.3f} s  -> {ideal / took:.1%} of ideal  "
        f"({requests / took:.0f} req/s; usage recorded {tracker.total().requests}; "
        f"client CPU {1000 * cpu / requests:.2f} ms per request)"
    )

    limit = ConcurrencyLimit(concurrency)
    achat = OpenAIChat("fake", base_url=url, transport=transport)  # type: ignore[arg-type]
    allm = stack(achat, max_concurrency=limit)

    async def run_all() -> float:
        await asyncio.gather(*(allm.acomplete(r) for r in reqs[:concurrency]))
        start = time.perf_counter()
        outs = await asyncio.gather(*(allm.acomplete(r) for r in reqs))
        assert all(o.text for o in outs)
        return time.perf_counter() - start

    took = asyncio.run(run_all())
    print(
        f"transport={transport:<6} asyncio : {took:.3f} s  -> {ideal / took:.1%} of ideal  "
        f"({requests / took:.0f} req/s)"
    )


def bench_cache(repeats: int = 5000) -> None:
    print("\n## Cache hits (target < 1000 us; 'no cache' is the bare scripted model)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.sqlite"
        inner = ScriptedLLM(fn=lambda r: "an answer of a few words " * 8)
        cached = CachedLLM(inner, path)
        full = stack(inner, cache=path, tracker=UsageTracker())
        reqs = [Request(prompt=f"prompt {i} " * 50) for i in range(100)]
        for r in reqs:
            cached.complete(r)
        for name, llm in (("no cache", inner), ("CachedLLM", cached), ("full stack", full)):
            times = []
            for i in range(repeats):
                start = time.perf_counter()
                out = llm.complete(reqs[i % len(reqs)])
                times.append(time.perf_counter() - start)
                assert out.cached or llm is inner
            times.sort()
            print(
                f"{name:11}: mean {statistics.mean(times) * 1e6:.0f} us, "
                f"median {times[len(times) // 2] * 1e6:.0f} us, "
                f"p99 {times[int(len(times) * 0.99)] * 1e6:.0f} us"
            )


def bench_model() -> None:
    print("\n## Embedded model (Gemma 3 270M Q4_K_M, llama-cpp-python)")
    llm = LocalLlama(n_ctx=4096)
    start = time.perf_counter()
    llm.load()
    print(f"load: {time.perf_counter() - start:.2f} s, threads {llm.n_threads}")
    llm.complete(Request(prompt="Hello", max_tokens=2))  # warm-up
    table = "\n".join(f"row {i} : city {i} | {1900 + i} | {i * 37 % 1000}" for i in range(80))
    prompt = f"col : city | year | count\n{table}\nQuestion: which year has the largest count?"
    # wall-clock rates depend on what else runs; per CPU-second rates (this process's CPU
    # time, llama.cpp threads included) approximate an otherwise idle machine
    start, cpu = time.perf_counter(), time.process_time()
    out = llm.complete(Request(prompt=prompt, max_tokens=1))
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    pp = out.usage.prompt_tokens
    print(
        f"prompt processing: {pp} tokens in {took:.2f} s -> {pp / took:.0f} tokens/s "
        f"({pp / cpu:.0f} tokens per CPU-second)"
    )
    story = "Once upon a time, in a small village by the sea, there lived"
    start, cpu = time.perf_counter(), time.process_time()
    out = llm.complete(Request(prompt=story, max_tokens=128, temperature=0.0))
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    gen = out.usage.completion_tokens
    print(
        f"generation: {gen} tokens in {took:.2f} s -> {gen / took:.0f} tokens/s "
        f"({gen / cpu:.0f} tokens per CPU-second)"
    )

    def table_prompt(tag: str, rows: int = 95) -> str:
        lines = "\n".join(
            f"row {i} : {tag} {i} | {1900 + i} | {i * 37 % 1000}" for i in range(rows)
        )
        return f"col : name | year | count\n{lines}\nQuestion: which year has the largest count?"

    start, cpu = time.perf_counter(), time.process_time()
    one = llm.complete(Request(prompt=table_prompt("alpha"), max_tokens=16, temperature=0.8))
    one_s, one_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    out = llm.complete(Request(prompt=table_prompt("beta"), n=8, max_tokens=16, temperature=0.8))
    eight_s, eight_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"one sample of a fresh {one.usage.prompt_tokens}-token prompt: {one_s:.2f} s "
        f"({one_cpu:.2f} CPU-s); n=8 samples of another: {eight_s:.2f} s ({eight_cpu:.2f} CPU-s)"
        f" -> {8 * one_cpu / eight_cpu:.1f}x less CPU than 8 fresh calls; "
        f"{len(set(out.texts))} distinct samples"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--skip-model", action="store_true")
    args = parser.parse_args()
    print(
        f"# bench_llm on {platform.machine()}, {len(os.sched_getaffinity(0))} CPUs, "
        f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.2f}"
    )
    proc, url = spawn(args.latency)
    try:
        bench_throughput(url, args.requests, args.concurrency, args.latency)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
    bench_cache()
    if not args.skip_model:
        bench_model()
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
