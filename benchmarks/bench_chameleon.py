"""Cost and accuracy of Chameleon on TabMWP and ScienceQA with the embedded model.

For every example it records LLM requests, prompt and completion tokens, wall time,
the modules the planner chose (after merging), the answer, and the default and
paper scores (tablereason.evaluate metrics). Results are appended to a JSON-lines
log as they come, so a long run can be resumed with ``--resume``.

    .venv/bin/python benchmarks/bench_chameleon.py --tabmwp 50 --scienceqa 50 \
        --log chameleon.jsonl
    .venv/bin/python benchmarks/bench_chameleon.py --tabmwp 2 --scienceqa 2 --llm scripted

TabMWP examples come from ../shared/data/tabmwp/problems_test.json; ScienceQA from
../shared/data/scienceqa (the demo pids are excluded). Both samples use a fixed seed,
and a smaller n gives a prefix of a larger one. A failed example counts as wrong.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablereason.datasets import load_dataset
from tablereason.datasets.example import Example
from tablereason.llm.base import LLM
from tablereason.methods.chameleon import Chameleon, modules_used, score
from tablereason.methods.chameleon.demos import SCIENCEQA_DEMO_PIDS
from tablereason.methods.chameleon.inventory import MODULES
from tablereason.trace import Prediction

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
sys.path.insert(0, str(Path(__file__).parent))


def sample(task: str, n: int, data: Path, seed: int = 0) -> list[Example]:
    """``n`` test examples of ``task`` in a fixed shuffled order (demo pids left out)."""
    examples = load_dataset(task, "test", data_dir=data)
    eligible = [ex for ex in examples if ex.id not in SCIENCEQA_DEMO_PIDS or task != "scienceqa"]
    random.Random(seed).shuffle(eligible)
    return eligible[:n]


def run_one(method: Chameleon, example: Example) -> tuple[dict[str, Any], Prediction]:
    started = time.perf_counter()
    prediction = method.run(example)
    elapsed = time.perf_counter() - started
    usage = prediction.trace.usage
    plan = next((s for s in prediction.trace.steps if s.kind == "plan"), None)
    record = {
        "task": method.task, "id": example.id, "profile": method.settings.profile,
        "answer": prediction.answer, "gold": example.answer, "error": prediction.error,
        "modules": modules_used(prediction),
        "plan_fallback": plan.error if plan is not None else None,
        "requests": usage.requests, "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens, "seconds": round(elapsed, 2),
    }  # fmt: skip
    scores = score(method.task, {example.id: prediction}, [example])
    record["correct"] = scores["default"].score == 1.0
    record["correct_paper"] = scores["paper"].score == 1.0
    return record, prediction


def summarise(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for task in ("tabmwp", "scienceqa"):
        items = [r for r in records if r["task"] == task]
        if not items:
            continue

        def mean(key: str, items: list[dict[str, Any]] = items) -> float:
            return statistics.fmean(float(r[key]) for r in items)

        usage = Counter(m for r in items for m in set(r["modules"]))
        out.append({
            "task": task, "n": len(items),
            "accuracy": 100 * mean("correct"), "accuracy_paper": 100 * mean("correct_paper"),
            "requests": mean("requests"), "prompt_tokens": mean("prompt_tokens"),
            "completion_tokens": mean("completion_tokens"), "seconds": mean("seconds"),
            "errors": sum(1 for r in items if r["error"]),
            "fallbacks": sum(1 for r in items if r["plan_fallback"]),
            "module_share": {m: round(100 * c / len(items), 1) for m, c in usage.most_common()},
            "top_plans": Counter(",".join(_short(r["modules"])) for r in items).most_common(5),
        })  # fmt: skip
    return out


def _short(modules: list[str]) -> list[str]:
    return [MODULES.get(m).abbreviation if m in MODULES else "PG+PV" for m in modules]


def markdown(summary: Sequence[dict[str, Any]], model: str) -> str:
    lines = [
        f"Model: {model}",
        "",
        "| task | n | accuracy (default) | accuracy (paper) | requests | prompt tok | "
        "completion tok | s / example | errors | plan fallbacks |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| {s['task']} | {s['n']} | {s['accuracy']:.1f} | {s['accuracy_paper']:.1f} | "
            f"{s['requests']:.1f} | {s['prompt_tokens']:.0f} | {s['completion_tokens']:.0f} | "
            f"{s['seconds']:.1f} | {s['errors']} | {s['fallbacks']} |"
        )
    for s in summary:
        share = ", ".join(f"{m} {p}%" for m, p in s["module_share"].items())
        plans = "; ".join(f"{p} ({c})" for p, c in s["top_plans"])
        lines += ["", f"{s['task']} modules run (share of examples): {share}",
                  f"{s['task']} most frequent plans: {plans}"]  # fmt: skip
    return "\n".join(lines)


def make_llm(kind: str) -> LLM:
    if kind == "local":
        from tablereason.llm import LocalLlama

        llm = LocalLlama(n_ctx=8192)
        llm.load()
        return llm
    from tablereason.llm import ScriptedLLM  # harness check without a model

    def reply(request: Any) -> str:
        site = request.call_site.rsplit("/", 1)[-1]
        replies = {"planner": "[solution_generator, answer_generator]"}
        return replies.get(site, "The answer is A.")

    return ScriptedLLM(fn=reply)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tabmwp", type=int, default=50)
    parser.add_argument("--scienceqa", type=int, default=50)
    parser.add_argument("--profile", choices=["default", "paper"], default="default")
    parser.add_argument("--llm", choices=["local", "scripted"], default="local")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--log", type=Path, default=None, help="append one JSON line per example")
    parser.add_argument("--resume", action="store_true", help="skip examples already in --log")
    parser.add_argument("--out", type=Path, default=None, help="write the summary as JSON")
    args = parser.parse_args(argv)

    llm = make_llm(args.llm)
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if args.resume and args.log and args.log.exists():
        for line in args.log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["profile"] == args.profile:
                done[(record["task"], record["id"])] = record
    records: list[dict[str, Any]] = []
    methods = {task: Chameleon(llm, task, args.profile) for task in ("tabmwp", "scienceqa")}
    queues = {"tabmwp": sample("tabmwp", args.tabmwp, args.data),
              "scienceqa": sample("scienceqa", args.scienceqa, args.data)}  # fmt: skip
    # Alternate the tasks, so a run stopped early still covers both.
    for index in range(max(len(q) for q in queues.values())):
        for task, queue in queues.items():
            if index >= len(queue):
                continue
            example = queue[index]
            if (task, example.id) in done:
                records.append(done[(task, example.id)])
                continue
            record, _ = run_one(methods[task], example)
            records.append(record)
            print(json.dumps(record), flush=True)
            if args.log:
                with args.log.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
    summary = summarise(records)
    model = f"{llm.name}:{llm.model}"
    print(markdown(summary, model))
    result = {"model": model, "profile": args.profile, "summary": summary, "records": records}
    if args.out:
        args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
