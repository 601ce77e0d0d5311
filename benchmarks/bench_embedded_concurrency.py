"""Concurrent questions on the embedded model: questions per minute at concurrency 1 and 4.

Runs the evaluation harness (what ``tablereason eval`` runs) on the first ``--limit``
test examples of a dataset, efficient Chain-of-Table profile, constraints off (the
parallel-sequence prototype decodes without grammars; both ways then make the same
requests), no response cache, once per ``way:concurrency`` in ``--runs``:

- ``workers:N``: ``LocalLlama(workers=N)``, one context per running question (what
  ``tablereason eval --concurrency N`` gives), each with ``--threads`` threads; the memory
  budget is lifted so that N contexts load (the log says how many did and what they took);
- ``batched:N``: ``BatchedLlama(slots=N)`` from ``embedded_batched.py``, one context whose
  N sequences are decoded in one batch, with ``--batched-threads`` threads.

Each run is one line of the log (``--resume`` skips the runs it already holds, so the
runs can be made in separate locked sessions):

    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/bench_embedded_concurrency.py \\
        --limit 30 --runs workers:1,workers:4 --log concurrency.jsonl --resume
    .venv/bin/python benchmarks/bench_embedded_concurrency.py --summarise concurrency.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_chain_of_table import DATA

from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
from tablereason.llm import LocalLlama
from tablereason.llm.backends.context_pool import anonymous_memory


def model_for(way: str, concurrency: int, args: argparse.Namespace) -> Any:
    """The model a run uses: contexts per worker, or one context of parallel sequences."""
    if way == "workers":
        return LocalLlama(n_threads=args.threads, workers=concurrency, memory_budget_mb=None)
    if way == "batched":
        from embedded_batched import BatchedLlama

        return BatchedLlama(slots=concurrency, threads=args.batched_threads)
    raise SystemExit(f"unknown way {way!r}: workers or batched")


def tokens_of(model: Any) -> tuple[int, int]:
    """Prompt tokens sent and evaluated by the model so far."""
    if isinstance(model, LocalLlama):
        stats = model.reuse_stats()
        return stats.tokens_sent, stats.tokens_evaluated
    figures = model.stats()
    return int(figures["tokens_sent"]), int(figures["tokens_evaluated"])


def run(way: str, concurrency: int, args: argparse.Namespace) -> dict[str, Any]:
    """One run of the harness; its wall time, questions per minute, tokens and memory."""
    memory_before = anonymous_memory()
    model = model_for(way, concurrency, args)
    with tempfile.TemporaryDirectory() as folder:
        spec = BenchmarkSpec(
            dataset=args.dataset,
            out=str(Path(folder) / "run"),
            profile="efficient",
            limit=args.limit,
            concurrency=concurrency,
            cache="",
            constrain="off",
            data_dir=str(args.data),
        )
        started = time.perf_counter()
        summary = run_benchmark(spec, llm=model, progress=False)
        seconds = time.perf_counter() - started
        records = [json.loads(line) for line in summary.path.read_text().splitlines() if line]
    sent, evaluated = tokens_of(model)
    memory_after = anonymous_memory()
    return {
        "run": f"{way}:{concurrency}",
        "way": way,
        "concurrency": concurrency,
        "questions": summary.ran,
        "failed": summary.failed,
        "seconds": round(seconds, 1),
        "per_minute": round(60 * summary.ran / seconds, 2),
        "metric": None if summary.result is None else round(summary.result.score, 3),
        "answers": {str(r["id"]): r.get("answer") for r in records if r.get("type") == "result"},
        "tokens": summary.tokens,
        "prompt_tokens_sent": sent,
        "prompt_tokens_evaluated": evaluated,
        "contexts": len(model._pool.contexts()) if isinstance(model, LocalLlama) else 1,
        "memory_added_mb": None
        if memory_before is None or memory_after is None
        else round((memory_after - memory_before) / 1e6),
    }


def summarise(records: list[dict[str, Any]]) -> str:
    """Questions per minute of each run, and each against its way's concurrency-1 run."""
    base = {r["way"]: r for r in records if r["concurrency"] == 1}
    lines = []
    for r in records:
        ratio = ""
        if r["way"] in base and r is not base[r["way"]]:
            ratio = f", {r['per_minute'] / base[r['way']]['per_minute']:.2f}x its concurrency 1"
        lines.append(
            f"{r['run']:<10} {r['questions']} questions in {r['seconds']} s: "
            f"{r['per_minute']} per minute{ratio}; {r['failed']} failed; metric {r['metric']}; "
            f"prompt tokens {r['prompt_tokens_evaluated']} evaluated of "
            f"{r['prompt_tokens_sent']} sent; {r['contexts']} contexts, "
            f"{r['memory_added_mb']} MB added"
        )
    first = records[0] if records else None
    for r in records[1:]:
        if first is not None:
            same = sum(r["answers"].get(k) == v for k, v in first["answers"].items())
            lines.append(
                f"answers of {r['run']} equal to {first['run']}'s: {same} of "
                f"{len(first['answers'])}"
            )
    return "\n".join(lines)


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="tabfact")
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--runs", default="workers:1,workers:4,batched:1,batched:4")
    parser.add_argument("--threads", type=int, default=1, help="threads of each worker context")
    parser.add_argument("--batched-threads", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--log", type=Path, help="JSON-lines log, one line per run")
    parser.add_argument("--resume", action="store_true", help="skip the runs in --log")
    parser.add_argument("--summarise", type=Path, help="only summarise this log")
    args = parser.parse_args(argv)
    if args.summarise:
        print(summarise(read_log(args.summarise)))
        return 0
    done = {r["run"] for r in read_log(args.log)} if args.log and args.resume else set()
    if args.log and not args.resume:
        args.log.write_text("")
    records = []
    for item in args.runs.split(","):
        way, _, count = item.partition(":")
        if item in done:
            continue
        record = run(way, int(count), args)
        print(json.dumps({k: v for k, v in record.items() if k != "answers"}), flush=True)
        records.append(record)
        if args.log:
            with args.log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, default=str) + "\n")
    print(summarise(read_log(args.log) if args.log else records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
