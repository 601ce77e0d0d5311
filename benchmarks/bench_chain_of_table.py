"""Cost and accuracy of Chain-of-Table, paper vs efficient profile, on TabFact and WikiTQ.

For every example it records LLM requests, completions, prompt and completion tokens,
wall time, the answer and whether it is right, then summarises per profile and task,
split by table size (up to 10 rows, more than 10). It also times one question end to
end on a 10-row TabFact table.

    .venv/bin/python benchmarks/bench_chain_of_table.py --tabfact 50 --wikitq 50
    .venv/bin/python benchmarks/bench_chain_of_table.py --tabfact 5 --wikitq 5 --out r.json
    .venv/bin/python benchmarks/bench_chain_of_table.py --summarise eff.jsonl paper.jsonl

TabFact examples come from ../shared/data/tabfact/test.jsonl (tables used by the prompt
demos are excluded); WikiTQ examples from ../shared/data/wikitq/data/test.tsv. Both
samples are drawn with a fixed seed. A failed example counts as wrong.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tablereason.llm.base import LLM
from tablereason.methods import ChainOfTable
from tablereason.methods.chain_of_table import completions
from tablereason.methods.chain_of_table.demos import DEMO_TABLE_IDS
from tablereason.table import Table

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
sys.path.insert(0, str(Path(__file__).parent))


def tabfact_sample(data: Path, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` TabFact statements whose tables are not used by the demos."""
    lines = (data / "tabfact" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    eligible = [i for i, r in enumerate(records) if r["table_id"] not in DEMO_TABLE_IDS]
    random.Random(seed).shuffle(eligible)
    picked = sorted(eligible[:n])  # a smaller n gives a subset of a larger one
    out = []
    for i in picked:
        r = records[i]
        table = Table.from_records(r["table_text"][0], r["table_text"][1:], r["table_caption"])
        out.append(
            {
                "id": f"test-{i}",
                "task": "tabfact",
                "table": table,
                "question": r["statement"],
                "gold": r["label"],
            }
        )
    return out


def wikitq_sample(data: Path, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` WikiTQ test questions with their tables (captioned by the page title)."""
    folder = data / "wikitq"
    with open(folder / "data" / "test.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    picked = sorted(order[:n])
    out = []
    for i in picked:
        row = rows[i]
        page = folder / row["context"].replace("-csv", "-page").replace(".csv", ".json")
        title = json.loads(page.read_text())["title"] if page.exists() else None
        table = Table.from_csv(folder / row["context"], caption=title)
        out.append(
            {
                "id": row["id"],
                "task": "wikitq",
                "table": table,
                "question": row["utterance"],
                "gold": None,
            }
        )
    return out


def wikitq_scorer(data: Path) -> Callable[[str, list[str]], bool]:
    """Official-equivalent WikiTQ denotation check against the tagged targets."""
    from tablereason.metrics.wikitq import (
        check_denotation,
        load_tagged_targets,
        to_value_list,
    )

    targets = load_tagged_targets([data / "wikitq" / "data" / "test.tagged"])
    return lambda ex_id, answer: check_denotation(targets[ex_id], to_value_list(answer))


def run_one(llm: LLM, profile: str, example: dict[str, Any]) -> dict[str, Any]:
    """Run one example; return its cost, time and answer."""
    method = ChainOfTable(llm, task=example["task"], profile=profile)
    start = time.perf_counter()
    prediction = method.run(example["table"], example["question"])
    seconds = time.perf_counter() - start
    usage = prediction.trace.usage
    return {
        "id": example["id"],
        "task": example["task"],
        "profile": profile,
        "rows": example["table"].num_rows,
        "seconds": round(seconds, 2),
        "requests": usage.requests,
        "completions": completions(prediction.trace),
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "answer": prediction.answer,
        "error": prediction.error,
        "chain": prediction.trace.steps[-1].arguments.get("chain"),
    }


def correct(result: dict[str, Any], example: dict[str, Any], score_wtq: Callable) -> bool:
    if result["error"]:
        return False
    if example["task"] == "tabfact":
        return result["answer"] == ("yes" if example["gold"] == 1 else "no")
    return bool(result["answer"]) and score_wtq(example["id"], result["answer"])


def summarise(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean cost per example and accuracy per (task, profile, size bucket)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in results:
        bucket = "<=10 rows" if r["rows"] <= 10 else ">10 rows"
        for key in ((r["task"], r["profile"], bucket), (r["task"], r["profile"], "all")):
            groups.setdefault(key, []).append(r)
    rows = []
    for (task, profile, bucket), items in sorted(groups.items()):

        def mean(key: str, items: list[dict[str, Any]] = items) -> float:
            return round(statistics.mean(i[key] for i in items), 1)

        rows.append(
            {
                "task": task,
                "profile": profile,
                "size": bucket,
                "n": len(items),
                "requests": mean("requests"),
                "completions": mean("completions"),
                "prompt_tokens": mean("prompt_tokens"),
                "completion_tokens": mean("completion_tokens"),
                "seconds": mean("seconds"),
                "accuracy": round(sum(i["correct"] for i in items) / len(items), 3),
                "failed": sum(1 for i in items if i["error"]),
            }
        )
    return rows


def paired(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Efficient over paper, summed over the examples both profiles ran, by table size.

    ``floor`` is the requests ratio the efficient profile would reach with its least
    possible cost, one planner call and the final query (2 requests), on every pair.
    """
    by_profile: dict[str, dict[str, dict[str, Any]]] = {}
    for r in results:
        by_profile.setdefault(r["profile"], {})[r["id"]] = r
    eff, pap = by_profile.get("efficient", {}), by_profile.get("paper", {})
    rows = []
    for size, keep in ((">10 rows", lambda r: r["rows"] > 10), ("all", lambda r: True)):
        ids = [i for i in pap if i in eff and keep(pap[i])]
        if not ids:
            continue
        row: dict[str, Any] = {"size": size, "pairs": len(ids)}
        for key in ("requests", "completions", "prompt_tokens", "completion_tokens", "seconds"):
            paper_total = sum(pap[i][key] for i in ids)
            row[key] = round(sum(eff[i][key] for i in ids) / paper_total, 3)
        row["floor"] = round(2 * len(ids) / sum(pap[i]["requests"] for i in ids), 3)
        rows.append(row)
    return rows


def markdown(summary: Sequence[dict[str, Any]]) -> str:
    cols = [
        "task",
        "profile",
        "size",
        "n",
        "requests",
        "completions",
        "prompt_tokens",
        "completion_tokens",
        "seconds",
        "accuracy",
        "failed",
    ]
    return table(summary, cols)


def table(rows: Sequence[dict[str, Any]], cols: Sequence[str]) -> str:
    """A markdown table of ``rows`` with the given columns."""
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def make_llm(kind: str, cache: Path | None = None, offline: bool = False) -> LLM:
    if cache is not None:
        from tablereason.llm import stack

        if offline:  # replay only: a request that changed is a cache miss and an error
            from tablereason.llm import LocalLlama

            return stack(LocalLlama(n_ctx=16384), cache=cache, offline=True)  # never loaded
        return stack(make_llm(kind), cache=cache)
    if kind == "local":
        from tablereason.llm import LocalLlama

        llm = LocalLlama(n_ctx=16384)
        llm.load()
        return llm
    from tablereason.llm import ScriptedLLM  # harness check without a model

    def reply(request: Any) -> str:
        site = request.call_site.rsplit("/", 1)[-1]
        return {"plan": " f_select_row(row 1) -> <END>", "select_row": "row 1])"}.get(site, " yes")

    return ScriptedLLM(fn=reply)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tabfact", type=int, default=50)
    parser.add_argument("--wikitq", type=int, default=50)
    parser.add_argument("--profiles", default="efficient,paper")
    parser.add_argument("--llm", choices=["local", "scripted"], default="local")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=None, help="write all results as JSON")
    parser.add_argument("--no-timing", action="store_true", help="skip the 10-row timing")
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="record every request and reply in this response cache (SQLite)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="with --cache: answer only from the cache, so any request that differs from "
        "the recorded run fails (a check that a change kept every prompt)",
    )
    parser.add_argument(
        "--log",
        type=Path,
        default=None,
        help="append each result as a JSON line (survives interruption)",
    )
    parser.add_argument(
        "--summarise",
        type=Path,
        nargs="+",
        default=None,
        help="only print the summary of --log files (a later record of the same "
        "profile and example replaces an earlier one)",
    )
    parser.add_argument(
        "--min-rows", type=int, default=0, help="run only examples whose table has more rows"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="skip the (profile, example) pairs the --log file already holds",
    )
    args = parser.parse_args(argv)
    if args.summarise:
        records: dict[tuple[str, str], dict[str, Any]] = {}
        for path in args.summarise:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    record = json.loads(line)
                    key = "timing" if record.get("timing") else record["id"]
                    records[(record["profile"], key)] = record
        logged = list(records.values())
        examples_run = [r for r in logged if not r.get("timing")]
        summary = summarise(examples_run)
        print(markdown(summary))
        pairs = paired(examples_run)
        if pairs:
            print("\nEfficient over paper, summed over paired examples:")
            cols = ["size", "pairs", "requests", "completions", "prompt_tokens"]
            print(table(pairs, [*cols, "completion_tokens", "seconds", "floor"]))
        for t in (r for r in logged if r.get("timing")):
            print(
                f"10-row TabFact {t['id']} ({t['profile']}): {t['seconds']} s, "
                f"{t['requests']} requests, {t['completions']} completions, "
                f"{t['prompt_tokens']} prompt tokens"
            )
        return {"summary": summary, "pairs": pairs}
    llm = make_llm(args.llm, args.cache, args.offline)
    profiles = args.profiles.split(",")
    examples = tabfact_sample(args.data, args.tabfact) + wikitq_sample(args.data, args.wikitq)
    examples = [e for e in examples if e["table"].num_rows > args.min_rows]
    done: set[tuple[str, str]] = set()
    if args.resume and args.log and args.log.exists():
        for line in args.log.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                done.add((record["profile"], "timing" if record.get("timing") else record["id"]))
    score_wtq = wikitq_scorer(args.data)
    ten = [e for e in tabfact_sample(args.data, 2000) if e["table"].num_rows == 10][:1]
    results, timing = [], []

    def log(result: dict[str, Any]) -> None:
        if args.log:
            with args.log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(result, default=str) + "\n")

    for profile in profiles:
        if not args.no_timing and (profile, "timing") not in done:
            for example in ten:
                timing.append({**run_one(llm, profile, example), "timing": True})
                log(timing[-1])
        for example in examples:
            if (profile, example["id"]) in done:
                continue
            result = run_one(llm, profile, example)
            result["correct"] = correct(result, example, score_wtq)
            results.append(result)
            log(result)
            print(
                json.dumps(
                    {
                        k: result[k]
                        for k in (
                            "id",
                            "profile",
                            "rows",
                            "seconds",
                            "requests",
                            "prompt_tokens",
                            "answer",
                            "correct",
                            "error",
                        )
                    }
                ),
                flush=True,
            )
    report = {
        "model": getattr(llm, "model", "") or type(llm).__name__,
        "summary": summarise(results),
        "timing_10_rows": timing,
        "results": results,
    }
    print(markdown(report["summary"]))
    for t in timing:
        print(
            f"10-row TabFact {t['id']} ({t['profile']}): {t['seconds']} s, "
            f"{t['requests']} requests, {t['completions']} completions, "
            f"{t['prompt_tokens']} prompt tokens"
        )
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return report


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
