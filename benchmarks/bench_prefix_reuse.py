"""Prefix state reuse on the embedded model: the same questions with reuse off and on.

Runs Chain-of-Table (efficient profile by default) on the fixed-seed TabFact and WikiTQ
test samples of ``bench_chain_of_table.py`` (demo tables left out) twice in one process,
question by question: on ``LocalLlama(reuse=False)`` (every prompt evaluated from its
first token) and on ``LocalLlama()`` (prompt beginnings reused). It records every model
call's text in both, so it can say whether the completions are identical, and per
question the seconds, the prompt tokens sent and those the model evaluated, and the
generated tokens. The machine's prompt evaluation and generation speeds are measured in
the same run (before and after), for the floor: tokens evaluated / prompt tokens per
second + generated tokens / generated tokens per second.

    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/bench_prefix_reuse.py \\
        --tabfact 12 --wikitq 12 --log prefix.jsonl
    .venv/bin/python benchmarks/bench_prefix_reuse.py --summarise prefix.jsonl

``--resume`` skips the questions the log already holds and appends, so a long run can be
made in chunks (each chunk is a new process: its reusing model starts with no saved
states, as a new process does).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_chain_of_table import DATA, tabfact_sample, wikitq_sample

from tablereason.llm import LocalLlama, Request
from tablereason.llm.base import Completion, SyncLLM

SAMPLE = (
    Path(__file__).parents[1] / "tests" / "chain_of_table" / "golden" / "efficient_tabfact_plan.txt"
)
"""The prompt whose evaluation measures the machine's speeds (twice over: about 2,100 tokens)."""


class Recorded(SyncLLM):
    """Passes requests to a model and keeps each call's site, texts and time."""

    def __init__(self, llm: LocalLlama) -> None:
        self.llm, self.name, self.model = llm, llm.name, llm.model
        self.calls: list[dict[str, Any]] = []

    def complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        completion = self.llm.complete(request)
        self.calls.append(
            {
                "site": request.call_site,
                "texts": completion.texts,
                "prompt_tokens": completion.usage.prompt_tokens,
                "completion_tokens": completion.usage.completion_tokens,
                "seconds": round(time.perf_counter() - started, 3),
            }
        )
        return completion


def speeds(llm: LocalLlama, prompt: str) -> dict[str, float]:
    """Prompt tokens per second (a fresh evaluation) and generated tokens per second."""
    import llama_cpp

    llama = llm.load()
    tokens = llama.tokenize(prompt.encode(), add_bos=True, special=True)
    llama.reset()
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(llama.ctx), True)
    started = time.perf_counter()
    llama.eval(tokens)
    prompt_s = time.perf_counter() - started
    started = time.perf_counter()  # the prompt is held: only the replies' tokens are decoded
    out = llama.create_completion(tokens, max_tokens=64, temperature=0, top_k=0, stop=[])
    gen_s = time.perf_counter() - started
    generated = int(out["usage"]["completion_tokens"])
    return {
        "prompt_tokens": len(tokens),
        "prompt_tps": round(len(tokens) / prompt_s, 1),
        "generated": generated,
        "gen_tps": round(generated / gen_s, 2),
    }


def run_question(llm: Recorded, profile: str, example: dict[str, Any]) -> dict[str, Any]:
    """One question on one model: its calls, seconds and the model's evaluated tokens."""
    from tablereason.methods import ChainOfTable

    before = llm.llm.reuse_stats()
    llm.calls = []
    started = time.perf_counter()
    prediction = ChainOfTable(llm, task=example["task"], profile=profile).run(
        example["table"], example["question"]
    )
    seconds = time.perf_counter() - started
    after = llm.llm.reuse_stats()
    return {
        "seconds": round(seconds, 2),
        "answer": prediction.answer,
        "error": prediction.error,
        "calls": llm.calls,
        "tokens_sent": after.tokens_sent - before.tokens_sent,
        "tokens_evaluated": after.tokens_evaluated - before.tokens_evaluated,
        "generated": sum(c["completion_tokens"] for c in llm.calls),
    }


def summarise(records: list[dict[str, Any]]) -> str:
    """The figures of a log: identity, seconds, tokens, states, floor."""
    questions = [r for r in records if r.get("kind") == "question"]
    machine = [r for r in records if r.get("kind") == "speeds"]
    states = [r for r in records if r.get("kind") == "states"]
    if not questions:
        return "no questions in the log"
    lines = []
    differ = [
        q
        for q in questions
        if [c["texts"] for c in q["off"]["calls"]] != [c["texts"] for c in q["on"]["calls"]]
    ]
    lines.append(f"questions: {len(questions)}; completions differing: {len(differ)}")
    for q in differ:
        lines.append(f"  differs: {q['id']} ({q['task']})")
    ptps = statistics.mean(m["prompt_tps"] for m in machine) if machine else None
    gtps = statistics.mean(m["gen_tps"] for m in machine) if machine else None
    if machine:
        lines.append(
            "machine: "
            + ", ".join(
                f"{m['when']} {m['prompt_tps']} prompt tok/s, {m['gen_tps']} gen tok/s"
                for m in machine
            )
        )
    totals: dict[str, dict[str, float]] = {}
    for mode in ("off", "on"):
        rows = [q[mode] for q in questions]
        t = {
            k: sum(r[k] for r in rows)
            for k in ("seconds", "tokens_sent", "tokens_evaluated", "generated")
        }
        t["requests"] = sum(len(r["calls"]) for r in rows)
        totals[mode] = t
        n = len(rows)
        floor = ""
        if ptps and gtps:
            f = t["tokens_evaluated"] / ptps + t["generated"] / gtps
            floor = f", floor {f / n:.2f} s/question (achieved {t['seconds'] / f:.2f}x the floor)"
        share = t["tokens_evaluated"] / max(1, t["tokens_sent"])
        lines.append(
            f"reuse {mode:<3}: {t['seconds'] / n:.2f} s/question, {t['requests'] / n:.2f} "
            f"requests, {t['tokens_sent'] / n:.0f} prompt tokens sent, "
            f"{t['tokens_evaluated'] / n:.0f} evaluated ({share:.3f}), "
            f"{t['generated'] / n:.1f} generated{floor}"
        )
    lines.append(f"seconds, on / off: {totals['on']['seconds'] / totals['off']['seconds']:.3f}")
    for task in ("tabfact", "wikitq"):
        rows = [q for q in questions if q["task"] == task]
        if rows:
            ratio = sum(q["on"]["seconds"] for q in rows) / sum(q["off"]["seconds"] for q in rows)
            lines.append(f"  {task}: {len(rows)} questions, on / off {ratio:.3f}")
    if states:
        peak = max(states, key=lambda s: s["bytes_held"])
        lines.append(
            f"saved states: at most {peak['bytes_held'] / 1e6:.1f} MB held "
            f"({peak['states']} states) of a {peak['budget_bytes'] / 1e6:.0f} MB budget; "
            f"per process: {sum(s['saved'] for s in _last_per_run(states))} saved, "
            f"{sum(s['restored'] for s in _last_per_run(states))} restored, "
            f"{sum(s['evicted'] for s in _last_per_run(states))} evicted"
        )
    return "\n".join(lines)


def _last_per_run(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last states record of each process (a new process starts its counts at 0)."""
    last: list[dict[str, Any]] = []
    for record in states:
        if last and record["saved"] >= last[-1]["saved"]:
            last[-1] = record
        else:
            last.append(record)
    return last


def read_log(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabfact", type=int, default=12)
    parser.add_argument("--wikitq", type=int, default=12)
    parser.add_argument("--profile", default="efficient")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--log", type=Path, help="JSON-lines log (overwritten unless --resume)")
    parser.add_argument("--resume", action="store_true", help="skip the questions in --log")
    parser.add_argument("--summarise", type=Path, nargs="+", help="only summarise these logs")
    parser.add_argument(
        "--batches", help="only measure the speeds at these n_batch values (e.g. 128,512)"
    )
    args = parser.parse_args(argv)
    if args.summarise:
        print(summarise([r for path in args.summarise for r in read_log(path)]))
        return 0
    if args.batches:
        for n_batch in (int(n) for n in args.batches.split(",")):
            model = LocalLlama(n_threads=args.threads, n_batch=n_batch, reuse=False)
            for _ in range(2):
                print(json.dumps({"n_batch": n_batch, **speeds(model, SAMPLE.read_text() * 2)}))
        return 0
    examples = tabfact_sample(DATA, args.tabfact) + wikitq_sample(DATA, args.wikitq)
    done: set[str] = set()
    if args.resume and args.log and args.log.exists():
        done = {r["id"] for r in read_log(args.log) if r.get("kind") == "question"}
    examples = [e for e in examples if e["id"] not in done]
    off = Recorded(LocalLlama(n_threads=args.threads, reuse=False))
    on = Recorded(LocalLlama(n_threads=args.threads))
    records: list[dict[str, Any]] = []

    def write(record: dict[str, Any]) -> None:
        records.append(record)
        if args.log:
            with args.log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")

    if args.log and not args.resume:
        args.log.write_text("")
    sample_prompt = SAMPLE.read_text()
    write({"kind": "speeds", "when": "before", **speeds(off.llm, sample_prompt * 2)})
    for example in examples:
        record: dict[str, Any] = {"kind": "question", "id": example["id"], "task": example["task"]}
        for mode, llm in (("off", off), ("on", on)):
            record[mode] = run_question(llm, args.profile, example)
        same = [c["texts"] for c in record["off"]["calls"]] == [
            c["texts"] for c in record["on"]["calls"]
        ]
        print(
            f"{example['id']}: off {record['off']['seconds']} s, on {record['on']['seconds']} s, "
            f"evaluated {record['on']['tokens_evaluated']} of {record['on']['tokens_sent']}, "
            f"{'same' if same else 'DIFFERENT'}",
            file=sys.stderr,
            flush=True,
        )
        write(record)
        assert on.llm.prefixes is not None  # the states so far (the last record counts)
        write({"kind": "states", **on.llm.prefixes.stats().__dict__})
    write({"kind": "speeds", "when": "after", **speeds(off.llm, sample_prompt * 2)})
    print(summarise(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
