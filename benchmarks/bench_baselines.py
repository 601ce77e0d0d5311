"""How often Text-to-SQL replies parse and Program-of-Thought programs run, on WikiTQ.

Runs ``text_to_sql`` and ``program_of_thought`` over WikiTQ test questions with a
model (the embedded Gemma 3 270M by default) and reads every model call back from the
traces:

* Text-to-SQL: the share of queries (first tries and repairs apart) that sqlglot parses
  as one query in the DuckDB dialect, the share that ran, answers and accuracy.
* Program-of-Thought: the share of programs that ran and set ``ans`` (its value may
  still be empty), the share that verified, answers and accuracy.

The script measures whichever ``tablereason`` it imports, so the code before a change
is measured by putting an export of that commit first on the path:

    .venv/bin/python benchmarks/bench_baselines.py --limit 30 --out after.jsonl
    git archive <commit> tablereason | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before .venv/bin/python benchmarks/bench_baselines.py --limit 30 \\
        --out before.jsonl
    .venv/bin/python benchmarks/bench_baselines.py --summarise before.jsonl after.jsonl

Examples are drawn with the fixed seed of ``bench_chain_of_table.py`` (the same 30
questions for every run). Wrap real-model runs in ``flock /tmp/tablereason-model.lock``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

sys.path.insert(0, str(Path(__file__).parent))

from bench_chain_of_table import DATA, wikitq_sample, wikitq_scorer

_PROGRAM_RAN = ("`ans` is empty",)  # a program that ran and set an empty value still ran


def sql_parses(query: str) -> bool:
    """Whether sqlglot reads ``query`` as exactly one query (SELECT, set operation, CTE)."""
    try:
        trees = [t for t in sqlglot.parse(query, read="duckdb") if t is not None]
    except (sqlglot.errors.SqlglotError, ValueError, RecursionError):
        return False
    return len(trees) == 1 and isinstance(trees[0], exp.Query)


def run_one(method_name: str, llm: Any, example: dict[str, Any]) -> dict[str, Any]:
    """Run one example with one method; return every call's outcome and the answer."""
    from tablereason.methods import ProgramOfThought, TextToSQL

    method = TextToSQL(llm) if method_name == "text_to_sql" else ProgramOfThought(llm)
    started = time.perf_counter()
    prediction = method.run(example["table"], example["question"])
    seconds = time.perf_counter() - started
    calls = []
    for step in prediction.trace.steps:
        if step.kind == "sql":
            query = str(step.arguments.get("query", ""))
            calls.append({
                "raw": step.raw[0] if step.raw else "", "code": query,
                "parses": sql_parses(query),
                "ran": step.error is None or step.error == "the query returned no rows",
                "error": step.error,
            })  # fmt: skip
        elif step.kind == "program":
            error = step.error
            calls.append({
                "raw": step.raw[0] if step.raw else "",
                "code": str(step.arguments.get("program", "")),
                "ran": error is None or error.startswith(_PROGRAM_RAN), "error": error,
            })  # fmt: skip
    return {
        "id": example["id"], "method": method_name, "seconds": round(seconds, 2),
        "answer": prediction.answer, "error": prediction.error, "calls": calls,
        "requests": prediction.trace.usage.requests,
    }  # fmt: skip


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "0/0"


def summarise(records: list[dict[str, Any]], label: str) -> str:
    """One block of figures per method."""
    scorer = wikitq_scorer(DATA)
    lines = [f"== {label}"]
    for method in ("text_to_sql", "program_of_thought"):
        rows = [r for r in records if r["method"] == method]
        if not rows:
            continue
        first = [r["calls"][0] for r in rows if r["calls"]]
        repairs = [c for r in rows for c in r["calls"][1:]]
        every = first + repairs
        answered = sum(1 for r in rows if r["answer"] not in ("", [], None))
        right = sum(1 for r in rows if r["answer"] and scorer(r["id"], _as_list(r["answer"])))
        seconds = sum(r["seconds"] for r in rows)
        lines.append(f"{method}: {len(rows)} questions, {len(every)} model calls, {seconds:.0f} s")
        if method == "text_to_sql":
            key = "parses"
            lines.append(
                f"  parse: all {_share(sum(c[key] for c in every), len(every))}, "
                f"first {_share(sum(c[key] for c in first), len(first))}, "
                f"repairs {_share(sum(c[key] for c in repairs), len(repairs))}"
            )
        lines.append(
            f"  ran: all {_share(sum(c['ran'] for c in every), len(every))}, "
            f"first {_share(sum(c['ran'] for c in first), len(first))}, "
            f"repairs {_share(sum(c['ran'] for c in repairs), len(repairs))}"
        )
        lines.append(
            f"  answered {_share(answered, len(rows))}, right {_share(right, len(rows))}, "
            f"raised 0 (a raise stops the script)"
        )
    return "\n".join(lines)


def _as_list(answer: Any) -> list[str]:
    return [str(a) for a in answer] if isinstance(answer, list) else [str(answer)]


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a result file (later records of the same example replace earlier ones)."""
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            kept[(record["method"], record["id"])] = record
    return list(kept.values())


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, or summarise result files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=30, help="WikiTQ test questions")
    parser.add_argument(
        "--methods", default="text_to_sql,program_of_thought", help="comma-separated"
    )
    parser.add_argument("--out", type=Path, help="JSON-lines result file (appended; resumes)")
    parser.add_argument("--summarise", nargs="+", type=Path, help="only summarise these files")
    args = parser.parse_args(argv)
    if args.summarise:
        for path in args.summarise:
            print(summarise(read_records(path), str(path)))
        return 0
    from tablereason.llm import LocalLlama

    llm = LocalLlama()
    examples = wikitq_sample(DATA, args.limit)
    done = (
        {(r["method"], r["id"]) for r in read_records(args.out)}
        if args.out and args.out.exists()
        else set()
    )
    records: list[dict[str, Any]] = []
    for method in args.methods.split(","):
        for example in examples:
            if (method, example["id"]) in done:
                continue
            record = run_one(method, llm, example)
            records.append(record)
            print(
                f"{method} {example['id']} {record['seconds']:.1f}s calls={len(record['calls'])} "
                f"answer={record['answer']!r}",
                file=sys.stderr,
                flush=True,
            )
            if args.out:
                with args.out.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    everything = read_records(args.out) if args.out else records
    print(summarise(everything, str(args.out or "this run")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
