"""ReWOO against ReAct on HotpotQA: tokens, model calls and wall time per question.

Both methods run with the embedded model (Gemma 3 270M through llama.cpp) over the
document store built from the paragraphs of all 200 HotpotQA dev questions, twice:
with working tools, and with every tool forced to fail. Tokens count every model
call, tool-internal ones (the LLM tool) included. The demo questions are excluded.

    .venv/bin/python benchmarks/bench_rewoo.py --n 50          # the full benchmark
    .venv/bin/python benchmarks/bench_rewoo.py --n 10 --out bench-out/rewoo.md

Results stream to a JSON-lines file (``--results``); a rerun with the same file
skips what is done with the same method configuration (settings and prompt
hashes), so a long run can be stopped and resumed, and a changed method is rerun.
Each row also records where the tokens went (by call site) and the load average.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from statistics import mean, median
from typing import Any

from tablereason.datasets import load_dataset
from tablereason.methods.react import ReAct
from tablereason.methods.rewoo import ReWOO
from tablereason.methods.tool_tasks import DEMO_IDS
from tablereason.metrics.scorers import METRICS
from tablereason.tools import DocStore, FailingTool, LLMTool, search_tools
from tablereason.tools.docstore import DocumentExplorer, WikiSearch

REPO = Path(__file__).resolve().parents[1]
METHODS = ("rewoo", "react")
CONDITIONS = ("tools", "failing")


def build(method: str, condition: str, llm: Any, store: DocStore) -> Any:
    if method == "rewoo":
        tools: list[Any] = [WikiSearch(DocumentExplorer(store)), LLMTool(llm)]
    else:
        tools = list(search_tools(store, names=("Search", "Lookup")))
    if condition == "failing":
        tools = [FailingTool(t, f"{t.name} is down (forced failure)") for t in tools]
    cls = ReWOO if method == "rewoo" else ReAct
    return cls(llm, tools=tools, task="hotpotqa")


def config_hash(method: Any) -> str:
    """A short hash of a method's settings, tools and prompt templates."""
    text = json.dumps(method.config(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def tokens_by_site(trace: Any) -> dict[str, int]:
    """Tokens per call site: planner, solver, fallback, tool:<name>, step, forced_finish."""
    sites: dict[str, int] = {}
    for step in trace.steps:
        if not step.usage.requests:
            continue
        site = f"tool:{step.name}" if step.kind == "tool" else step.name
        sites[site] = sites.get(site, 0) + step.usage.total_tokens
    return sites


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    examples = load_dataset("hotpotqa", "dev", data_dir=args.data)
    store = DocStore.from_examples(examples)
    examples = [e for e in examples if e.id not in DEMO_IDS["hotpotqa"]][: args.n]
    results_path = Path(args.results)
    from tablereason.llm import LocalLlama

    llm = LocalLlama(n_ctx=8192)
    llm.load()
    hashes = {m: config_hash(build(m, "tools", llm, store)) for m in args.methods}
    done: dict[tuple[str, str, str], dict[str, Any]] = {}
    if results_path.exists():
        for line in results_path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("config") == hashes.get(row["method"]):
                done[(row["method"], row["condition"], row["id"])] = row
    results_path.parent.mkdir(parents=True, exist_ok=True)
    em, f1 = METRICS.get("hotpotqa_em"), METRICS.get("hotpotqa_f1")
    with results_path.open("a", encoding="utf-8") as out:
        for condition in args.conditions:
            methods = {m: build(m, condition, llm, store) for m in args.methods}
            for i, example in enumerate(examples, 1):
                for name, method in methods.items():
                    key = (name, condition, example.id)
                    if key in done:
                        continue
                    started = time.perf_counter()
                    crashed = None
                    try:
                        prediction = method.run(example)
                    except Exception as error:  # counted and reported: must stay zero
                        crashed = f"{type(error).__name__}: {error}"
                        prediction = None
                    wall = time.perf_counter() - started
                    answer = "" if prediction is None else prediction.answer
                    usage = prediction.trace.usage if prediction is not None else None
                    row = {
                        "method": name,
                        "condition": condition,
                        "id": example.id,
                        "answer": answer,
                        "gold": example.answer,
                        "em": em.score_example(answer, example),
                        "f1": f1.score_example(answer, example),
                        "tokens": usage.total_tokens if usage else 0,
                        "prompt_tokens": usage.prompt_tokens if usage else 0,
                        "calls": usage.requests if usage else 0,
                        "by_site": tokens_by_site(prediction.trace) if prediction else {},
                        "wall_s": round(wall, 2),
                        "load1": round(os.getloadavg()[0], 2),
                        "config": hashes[name],
                        "error": crashed or (prediction.error if prediction else None),
                        "exception": crashed,
                    }
                    if args.traces and prediction is not None:
                        folder = Path(args.traces)
                        folder.mkdir(parents=True, exist_ok=True)
                        name_ = f"{name}_{condition}_{example.id}.json"
                        (folder / name_).write_text(prediction.trace.to_json(indent=1))
                    done[key] = row
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    out.flush()
                    print(
                        f"[{condition} {i}/{len(examples)}] {name:5s} {wall:5.1f}s "
                        f"{row['tokens']:5d} tok {row['calls']:2d} calls em={row['em']:.0f} "
                        f"{str(answer)[:40]!r}",
                        flush=True,
                    )
    ids = {e.id for e in examples}
    return [r for r in done.values() if r["id"] in ids]


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table = []
    for condition in CONDITIONS:
        for method in METHODS:
            group = [r for r in rows if r["method"] == method and r["condition"] == condition]
            if not group:
                continue
            table.append(
                {
                    "method": method,
                    "condition": condition,
                    "n": len(group),
                    "tokens": mean(r["tokens"] for r in group),
                    "median_tokens": median(r["tokens"] for r in group),
                    "by_site": {
                        site: sum(r.get("by_site", {}).get(site, 0) for r in group) / len(group)
                        for site in sorted({s for r in group for s in r.get("by_site", {})})
                    },
                    "limit_runs": sum(1 for r in group if "forced_finish" in r.get("by_site", {})),
                    "load1": mean(r.get("load1", 0.0) for r in group),
                    "calls": mean(r["calls"] for r in group),
                    "wall_s": mean(r["wall_s"] for r in group),
                    "em": mean(r["em"] for r in group),
                    "f1": mean(r["f1"] for r in group),
                    "answered": sum(1 for r in group if str(r["answer"]).strip()),
                    "exceptions": sum(1 for r in group if r["exception"]),
                }
            )
    return table


def markdown(table: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        "| condition | method | N | tokens / q | median | model calls / q | wall s / q | EM | F1 "
        "| answered | exceptions |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in table:
        lines.append(
            f"| {t['condition']} | {t['method']} | {t['n']} | {t['tokens']:.0f} | "
            f"{t['median_tokens']:.0f} | {t['calls']:.2f} | {t['wall_s']:.1f} | {t['em']:.3f} | "
            f"{t['f1']:.3f} | {t['answered']}/{t['n']} | {t['exceptions']} |"
        )
    notes = []
    for condition in CONDITIONS:
        pair = {t["method"]: t for t in table if t["condition"] == condition}
        if "rewoo" in pair and "react" in pair and pair["react"]["tokens"]:
            ratio = pair["rewoo"]["tokens"] / pair["react"]["tokens"]
            mid = pair["rewoo"]["median_tokens"] / pair["react"]["median_tokens"]
            notes.append(
                f"- {condition}: ReWOO uses {ratio:.2f}x ReAct's mean tokens per question "
                f"({mid:.2f}x the median); ReAct reached its iteration limit on "
                f"{pair['react']['limit_runs']} of {pair['react']['n']} questions."
            )
    for t in table:
        sites = ", ".join(f"{k} {v:.0f}" for k, v in t["by_site"].items())
        notes.append(f"- {t['condition']} {t['method']} tokens / q by call site: {sites}.")
    load = mean(t["load1"] for t in table) if table else 0.0
    machine = (
        f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPUs available, "
        f"mean 1-minute load average {load:.1f} while it ran"
    )
    return "\n".join(
        [*lines, "", *notes, "", f"Command: `{' '.join(sys.argv)}`; machine: {machine}."]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="questions (the issue asks for 50)")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    parser.add_argument("--results", default=str(REPO / "bench-out" / "rewoo.jsonl"))
    parser.add_argument("--out", default=None, help="write the summary table to this file")
    parser.add_argument("--traces", default=None, help="save every trace as JSON in this folder")
    args = parser.parse_args()
    rows = run(args)
    text = markdown(summarize(rows), args)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
