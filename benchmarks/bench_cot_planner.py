"""How often the Chain-of-Table planner's first call proposes an operation it may run.

For each TabFact question the method runs as usual, but only the first planner call
goes to the model; every later call gets a canned reply (``<END>`` for the planner,
"yes" elsewhere), so the cost is one model call per question. A question counts as
*valid* when that first reply names an allowed operation (as in the published code: the first
allowed name of the generated chain wins), and as *digits* when the reply has no
``f_`` call and is mostly digits (the failure mode a small model falls into).

    .venv/bin/python benchmarks/bench_cot_planner.py --tabfact 24 --profile paper
    .venv/bin/python benchmarks/bench_cot_planner.py --tabfact 24 --log plan.jsonl
    .venv/bin/python benchmarks/bench_cot_planner.py --llm scripted --tabfact 2   # no model

Questions are the same seeded sample as ``bench_chain_of_table.py`` (demo tables left
out), so ``--tabfact 24`` is a prefix-stable subset of the larger benchmark samples.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_chain_of_table import DATA, make_llm, tabfact_sample

from tablereason.llm import ScriptedLLM
from tablereason.llm.base import LLM, Request
from tablereason.methods import ChainOfTable


def is_digits(text: str) -> bool:
    """Whether a reply is a run of digits rather than a chain (no ``f_`` call in it)."""
    body = re.sub(r"\s", "", text)
    return "f_" not in text and bool(body) and sum(c.isdigit() for c in body) >= len(body) / 2


def first_plan(llm: LLM, profile: str, example: dict[str, Any]) -> dict[str, Any]:
    """Run one example with only its first planner call sent to ``llm``."""
    seen: dict[str, Any] = {}

    def reply(request: Request) -> str | list[str]:
        site = request.call_site.rsplit("/", 1)[-1]
        if site == "plan" and not seen:
            start = time.perf_counter()
            seen["completion"] = llm.complete(request)
            seen["seconds"] = round(time.perf_counter() - start, 2)
            return list(seen["completion"].texts)
        if site == "plan":
            return [" <END>"] * request.n
        return [" yes"] * request.n

    method = ChainOfTable(ScriptedLLM(fn=reply), task="tabfact", profile=profile)
    prediction = method.run(example["table"], example["question"])
    # the first planner step that asked the model (a single allowed option asks nothing)
    steps = [s for s in prediction.trace.steps if s.kind == "plan"]
    first = next((s for s in steps if s.raw), steps[0])
    text = first.raw[0] if first.raw else ""
    chosen = first.arguments.get("chosen") or first.name
    completion = seen.get("completion")
    return {
        "id": example["id"],
        "profile": profile,
        "rows": example["table"].num_rows,
        "reply": text,
        "proposed": first.arguments.get("proposed", []),
        "chosen": chosen,
        "valid": chosen not in (None, "<END>"),
        "digits": is_digits(text),
        "prompt_tokens": completion.usage.prompt_tokens if completion else 0,
        "completion_tokens": completion.usage.completion_tokens if completion else 0,
        "seconds": seen.get("seconds", 0.0),
    }


def summarise(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts of valid first operations, digit runs and chosen operations."""
    n = len(results)
    return {
        "n": n,
        "valid": sum(r["valid"] for r in results),
        "digits": sum(r["digits"] for r in results),
        "chosen": dict(Counter(r["chosen"] for r in results).most_common()),
        "completion_tokens": round(sum(r["completion_tokens"] for r in results) / max(n, 1), 1),
        "prompt_tokens": round(sum(r["prompt_tokens"] for r in results) / max(n, 1), 1),
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tabfact", type=int, default=24, help="questions (default 24)")
    parser.add_argument("--profile", choices=["paper", "efficient"], default="paper")
    parser.add_argument("--llm", choices=["local", "scripted"], default="local")
    parser.add_argument("--seed", type=int, default=0, help="sample seed")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--log", type=Path, help="write one JSON line per question")
    args = parser.parse_args(argv)

    llm = make_llm(args.llm)
    results = []
    for example in tabfact_sample(args.data, args.tabfact, args.seed):
        result = first_plan(llm, args.profile, example)
        results.append(result)
        print(
            f"{result['id']:>10} valid={result['valid']!s:5} chosen={result['chosen']:<13} "
            f"reply={result['reply'][:70]!r}",
            flush=True,
        )
        if args.log:
            with args.log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(result) + "\n")
    summary = summarise(results)
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
