"""Answers a user can check: evidence recall and precision, warnings, the embedded model.

    .venv/bin/python benchmarks/bench_evidence.py large --rows 1000000
    .venv/bin/python benchmarks/bench_evidence.py wikitq
    .venv/bin/python benchmarks/bench_evidence.py warnings
    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/bench_evidence.py model \
        --runs docs/benchmarks/logs/answers/model-runs.jsonl
    .venv/bin/python benchmarks/bench_evidence.py same-scores --before <git revision>

``large``: the 51 large-table questions of bench_large_tables.py, with the scripted
right decisions; each answer's evidence (every cited cell, not only the listed ones)
is compared with the cells pandas says it rests on (large_table_questions.py's
``cites``): recall (the gold cells cited) and precision (the cited cells that are
gold), and the warnings raised. ``wikitq``: the WikiTQ fixture questions whose gold
answer is exactly one cell of the table, answered by a right chain that selects its
row and column, and by one that answers from the whole table. ``warnings``: one
scripted wrong run per warning code over the same public tables. ``model``: the
embedded Gemma 3 270M on 22 questions of our own (evidence_questions.py): how many
wrong answers, and how many right ones, carry a warning. ``same-scores``: the
evaluation of the fixture data with a scripted model, here and at another revision:
every score must be the same.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import bench_large_tables as B
import evidence_questions as E
import large_table_questions as Q

from tablereason.datasets import load_dataset
from tablereason.llm import LLM, Request, ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.table import Table
from tablereason.trace import Prediction

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "data"


def cited(prediction: Prediction) -> set[tuple[int, str]]:
    """Every input cell the answer's evidence cites (the record lists the first 50)."""
    from tablereason.answers.assess import assess  # not at another revision (same-scores)

    return {(int(r), c) for c, rows in assess(prediction).positions.items() for r in rows}


def score(found: set[tuple[int, str]], gold: set[tuple[int, str]]) -> dict[str, Any]:
    hit = len(found & gold)
    return {
        "gold_cells": len(gold),
        "cited_cells": len(found),
        "recall": hit / len(gold) if gold else 1.0,
        "precision": hit / len(found) if found else 0.0,
        "contains_gold": gold <= found,
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    right = [r for r in rows if r["right"]]
    warned = [r for r in right if r["warnings"]]
    return {
        "questions": len(rows),
        "right": len(right),
        "evidence_contains_gold": sum(r["contains_gold"] for r in right),
        "share_containing_gold": sum(r["contains_gold"] for r in right) / max(1, len(right)),
        "mean_precision": sum(r["precision"] for r in right) / max(1, len(right)),
        "cells_cited": sum(r["cited_cells"] for r in right),
        "cells_gold": sum(r["gold_cells"] for r in right),
        "right_with_warnings": len(warned),
    }


# ----------------------------------------------------------------------------- large tables


def bench_large(rows: int) -> dict[str, Any]:
    tables = B.load_tables(rows)
    out = []
    for question in Q.public() + Q.synthetic():
        table, data = tables[question.table]
        llm, _ = B.scripted(question)
        start = time.perf_counter()
        prediction = ChainOfTable(llm, task="wikitq").run(table, question.text)
        seconds = time.perf_counter() - start
        answer = prediction.answer[0] if prediction.answer else ""
        assert question.cites is not None
        gold = question.cites(data, answer)
        start = time.perf_counter()
        found = cited(prediction)
        check_s = time.perf_counter() - start
        row = {
            "table": question.table,
            "question": question.text,
            "answer": answer,
            "right": prediction.error is None and B.matches(answer, question.gold(data)),
            **score(found, gold),
            "how": prediction.evidence.how if prediction.evidence else "",
            "warnings": [w.code for w in prediction.warnings or []],
            "answer_s": round(seconds, 2),
            "check_s": round(check_s, 2),
        }
        out.append(row)
        mark = "ok " if row["contains_gold"] else "BAD"
        print(f"{mark} {question.text} -> {answer}: {row['cited_cells']} cited, "
              f"{row['gold_cells']} gold, precision {row['precision']:.3f} "
              f"{row['warnings']}")  # fmt: skip
    result = {"rows": rows, "summary": summary(out), "questions": out}
    print(json.dumps(result["summary"]))
    return result


# ----------------------------------------------------------------------------- wikitq fixture


def one_cell(table: Table, gold: list[str]) -> tuple[int, str] | None:
    """The one cell equal to the gold answer (spaces and case aside), if there is exactly one."""
    if len(gold) != 1:
        return None
    want = " ".join(gold[0].split()).casefold()
    hits = [
        (r, c)
        for r, row in enumerate(table.rows())
        for c, cell in zip(table.columns, row, strict=True)
        if " ".join(cell.split()).casefold() == want
    ]
    return hits[0] if len(hits) == 1 else None


def chain_model(plan: str, answer: str, column: str) -> LLM:
    def reply(request: Request) -> str:
        site = request.call_site.rsplit("/", 1)[-1]
        if site == "plan":
            return plan
        if site == "final_query":
            return " " + answer
        return f"{column}])"

    return ScriptedLLM(fn=reply)


def bench_wikitq() -> dict[str, Any]:
    examples = load_dataset("wikitq", "test", data_dir=FIXTURES)
    results: dict[str, list[dict[str, Any]]] = {"select": [], "direct": []}
    for example in examples:
        table = example.table
        assert table is not None
        cell = one_cell(table, example.answers)
        if cell is None:
            continue
        row, column = cell
        gold_text = table.rows()[row][table.columns.index(column)]
        plans = {
            "select": f" f_select_row(row {row + 1}) -> f_select_column({column}) -> <END>",
            "direct": " <END>",
        }
        for name, plan in plans.items():
            llm = chain_model(plan, gold_text, column)
            prediction = ChainOfTable(llm, task="wikitq").run(table, example.question)
            right = prediction.error is None and prediction.answer == [gold_text]
            results[name].append({
                "id": example.id, "answer": prediction.answer, "right": right,
                **score(cited(prediction), {cell}),
                "warnings": [w.code for w in prediction.warnings or []],
            })  # fmt: skip
    out = {name: {"summary": summary(rows), "questions": rows} for name, rows in results.items()}
    for name, part in out.items():
        print(name, json.dumps(part["summary"]))
    return out


# ----------------------------------------------------------------------------- warnings


WARNING_CASES = [
    # code, question, the chain, the answer (None: the model fails at the answer)
    ("empty_table", "which day had hail?", " f_select_row(where weather = 'Hail') -> <END>",
     " 2012-06-01"),
    ("no_match", "how many days had snow?", " f_select_row(where weather = 'Snow') -> <END>",
     " 0"),
    ("not_in_table", "which weather was the most common?", " f_group_column(weather) -> <END>",
     " fog and rain"),
    ("whole_row", "what was the weather on 2012-01-02?",
     " f_select_row(where date = '2012/01/02') -> <END>",
     " 2012/01/02 | 10.9 | 10.6 | 2.8 | 4.5 | rain"),
    ("sentence", "what was the weather on 2012-01-02?",
     " f_select_row(where date = '2012/01/02') -> <END>",
     " On the second of January it was a wet day in Seattle."),
    ("chain_error", "how many days had snow?", " f_select_row(where weather = 'snow') -> <END>",
     None),
    ("count_mismatch", "how many days had snow?",
     " f_select_row(where weather = 'snow') -> <END>", " 15"),
]  # fmt: skip


def bench_warnings() -> dict[str, Any]:
    """One wrong run per code over Seattle's weather, each with its scripted decisions."""
    from tablereason.errors import LLMError

    weather = Table.from_csv(Q.vega_csv("seattle-weather"), escape=None)
    out = []
    for code, question, plan, answer in WARNING_CASES:

        def reply(request: Request, plan: str = plan, answer: str | None = answer) -> str:
            if request.call_site.endswith("/plan"):
                return plan
            if answer is None:
                raise LLMError("scripted model failure")
            return answer

        prediction = ChainOfTable(ScriptedLLM(fn=reply), task="wikitq").run(weather, question)
        codes = [w.code for w in prediction.warnings or []]
        out.append({"code": code, "question": question, "answer": prediction.answer,
                    "raised": code in codes, "warnings": codes,
                    "messages": [w.message for w in prediction.warnings or []]})  # fmt: skip
        print(f"{'ok ' if code in codes else 'BAD'} {code}: {codes}")
    return {"cases": out, "raised": sum(c["raised"] for c in out), "codes": len(out)}


# ----------------------------------------------------------------------------- the embedded model


def bench_model(limit: int | None, runs: Path | None = None) -> dict[str, Any]:
    """The embedded model on the first ``limit`` questions; ``runs`` keeps each run.

    With ``runs`` (a JSON-lines file), questions already recorded there are not asked
    again and the summary covers every recorded run, so the run can be made in chunks.
    """
    from tablereason.llm import LocalLlama

    rows: list[dict[str, Any]] = []
    if runs is not None and runs.exists():
        rows = [json.loads(line) for line in runs.read_text().splitlines() if line.strip()]
    done = {(r["table"], r["question"]) for r in rows}
    todo = [q for q in E.questions()[:limit] if (q.table, q.text) not in done]
    llm = LocalLlama(n_threads=2) if todo else None
    for question in todo:
        data = E.frame(question.table)
        table = Table.from_pandas(data, caption=question.table.rsplit(".", 1)[0])
        start = time.perf_counter()
        assert llm is not None
        prediction = ChainOfTable(llm, task="wikitq").run(table, question.text)
        seconds = time.perf_counter() - start
        answer = prediction.answer[0] if prediction.answer else ""
        gold = question.gold(data)
        value = prediction.value.text if prediction.value else ""
        rows.append({
            "table": question.table, "question": question.text, "answer": prediction.answer,
            "value": value, "gold": sorted(gold) if isinstance(gold, set) else gold,
            "right": prediction.error is None and B.matches(answer, gold),
            "right_value": prediction.error is None and B.matches(value, gold),
            "warnings": [w.code for w in prediction.warnings or []],
            "evidence": prediction.evidence.status if prediction.evidence else None,
            "seconds": round(seconds, 1), "requests": prediction.trace.usage.requests,
            "prompt_tokens": prediction.trace.usage.prompt_tokens, "error": prediction.error,
        })  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
        if runs is not None:
            with runs.open("a", encoding="utf-8") as file:
                file.write(json.dumps(rows[-1]) + "\n")
    wrong = [r for r in rows if not r["right"]]
    right = [r for r in rows if r["right"]]
    codes = Counter(c for r in rows for c in set(r["warnings"]))
    result = {
        "questions": len(rows),
        "right": len(right),
        "right_after_normalising": sum(r["right_value"] for r in rows),
        "wrong_with_warnings": sum(bool(r["warnings"]) for r in wrong),
        "wrong": len(wrong),
        "right_with_warnings": sum(bool(r["warnings"]) for r in right),
        "by_code": dict(codes.most_common()),
        "evidence_found": sum(r["evidence"] == "found" for r in rows),
        "median_s": sorted(r["seconds"] for r in rows)[len(rows) // 2] if rows else 0,
        "requests": sum(r["requests"] for r in rows),
        "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
    }
    print(json.dumps(result))
    return {"summary": result, "runs": rows}


# ----------------------------------------------------------------------------- same scores


def fixture_scores() -> dict[str, Any]:
    """Scores of the fixture WikiTQ and TabFact evaluations with a scripted model."""
    from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
    from tablereason.evaluate.results import read_results

    def reply(request: Request) -> str:
        text = request.as_text().rstrip()
        if request.call_site.endswith("/plan"):
            return " f_select_row(row 1) -> <END>"
        if request.call_site.endswith("/final_query"):
            if "Statement:" in text:
                return " yes" if len(text) % 2 else " no"
            row = [line for line in text.splitlines() if line.startswith("row 1 : ")]
            return " " + (row[-1][len("row 1 : ") :].split(" | ")[0] if row else "none")
        return "row 1])"

    scores: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        for dataset in ("wikitq", "tabfact"):
            spec = BenchmarkSpec(dataset=dataset, out=f"{folder}/{dataset}",
                                 data_dir=str(FIXTURES))  # fmt: skip
            summary_ = run_benchmark(spec, llm=ScriptedLLM(fn=reply), progress=False)
            _, records, _ = read_results(summary_.path)
            for record in records:
                scores[f"{dataset}/{record['id']}"] = [record["answer"], record["score"]]
    return scores


def bench_same_scores(before: str) -> dict[str, Any]:
    here = fixture_scores()
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "tree"  # the files of that revision, not a git worktree
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", before],
                                 check=True, capture_output=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        out = Path(folder) / "scores.json"
        code = (f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                "import bench_evidence as E; "
                f"json.dump(E.fixture_scores(), open({str(out)!r}, 'w'))")  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run([sys.executable, "-c", code], check=True, cwd=tree, env=env)
        there = json.loads(out.read_text())
    differ = sorted(k for k in here if here[k] != there.get(k))
    mean = sum(float(v[1] or 0) for v in here.values()) / max(1, len(here))
    print(f"{len(here)} examples; mean score {mean:.4f}; differing: {len(differ)}")
    return {"examples": len(here), "differ": differ, "before": before, "mean_score": mean}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["large", "wikitq", "warnings", "model", "same-scores"])
    parser.add_argument("--rows", type=int, default=1_000_000, help="large: orders table rows")
    parser.add_argument("--questions", type=int, default=None, help="model: first N questions")
    parser.add_argument("--runs", type=Path, default=None,
                        help="model: JSON lines of the runs so far; resumes there")  # fmt: skip
    parser.add_argument("--before", default="HEAD", help="same-scores: revision to compare with")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    if args.what == "large":
        result = bench_large(args.rows)
    elif args.what == "wikitq":
        result = bench_wikitq()
    elif args.what == "warnings":
        result = bench_warnings()
    elif args.what == "model":
        result = bench_model(args.questions, args.runs)
    else:
        result = bench_same_scores(args.before)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, default=str))
    return result


if __name__ == "__main__":
    main()
