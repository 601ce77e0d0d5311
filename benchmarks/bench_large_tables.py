"""Chain-of-Table on large tables: bounded prompts, exact answers, the embedded model.

    .venv/bin/python benchmarks/bench_large_tables.py tokens
    .venv/bin/python benchmarks/bench_large_tables.py correct --rows 1000000
    flock /tmp/tablereason-model.lock .venv/bin/python benchmarks/bench_large_tables.py \
        model --rows 1000000
    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/bench_large_tables.py \
        conditions --rows 1000000 --constrain on
    .venv/bin/python benchmarks/bench_large_tables.py same-prompts --before <git revision>

``tokens``: prompt tokens per question (Gemma 3 tokenizer) at 100, 10,000 and 1,000,000
rows of the same synthetic table, with a scripted model making the same decisions.
``correct``: a scripted model gives the right decisions (the chain and the sort
order) and reads the answer off the final prompt; every answer is compared with gold
computed in pandas (benchmarks/large_table_questions.py). ``model``: the embedded
Gemma 3 270M on the synthetic table written as CSV: load time, time per question
after loading, peak memory over the CSV's size, how often the model wrote a usable
condition. ``conditions``: the same questions with the model and the CSV loaded once,
counting usable conditions (they parse, name columns of the table and match a row),
re-asks and requests, constraints on or off. ``same-prompts``: every prompt of the
50 + 50 Chain-of-Table benchmark examples, under fixed scripted decisions, hashed here
and at another revision.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
import large_table_questions as Q

from tablereason.llm import LLM, Request, ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.table import Table

SIZES = (100, 10_000, 1_000_000)


# ----------------------------------------------------------------------------- reading answers


def final_block(prompt: str) -> str:
    """The part of the final prompt after its instructions: the table, groups, question."""
    marker = "Read the table and answer the question"
    return prompt[prompt.rindex(marker) :]


def read_answer(prompt: str, read: tuple[str, ...]) -> str:
    """Read the answer off the final prompt the way ``read`` says (see Question.read)."""
    text = final_block(prompt)
    kind = read[0]
    if kind == "count":
        return re.findall(r"^rows : (\d+)$", text, re.M)[-1]
    if kind == "top_group":
        return re.search(r"^Group 1 \| (.*) \| \d+$", text, re.M).group(1)  # type: ignore[union-attr]
    if kind == "group_count":
        value = re.escape(read[1])
        return re.search(rf"^Group \d+ \| {value} \| (\d+)$", text, re.M).group(1)  # type: ignore[union-attr]
    if kind in ("max", "min"):
        line = re.search(rf"^column {re.escape(read[1])} : .*$", text, re.M).group(0)  # type: ignore[union-attr]
        low, high = re.search(r" ; from (.*?) to (.*?)(?: ; |$)", line).groups()  # type: ignore[union-attr]
        return high if kind == "max" else low
    if kind == "sum":
        line = re.search(rf"^column {re.escape(read[1])} : .*$", text, re.M).group(0)  # type: ignore[union-attr]
        return re.search(r" ; sum (\S+)", line).group(1)  # type: ignore[union-attr]
    if kind == "cell":
        header = re.search(r"^col : (.*)$", text, re.M).group(1).split(" | ")  # type: ignore[union-attr]
        first = re.search(r"^row 1 : (.*)$", text, re.M).group(1).split(" | ")  # type: ignore[union-attr]
        return first[header.index(read[1])]
    raise ValueError(f"unknown reading {kind!r}")


def matches(answer: str, gold: object) -> bool:
    """Exact match: integers and cells as text, numbers to 6 decimals, ties as a set."""
    if isinstance(gold, set):
        return answer in gold
    if isinstance(gold, int | str):
        return answer == str(gold)
    try:
        return abs(float(answer.replace(",", "")) - float(gold)) <= 1e-6  # type: ignore[arg-type]
    except ValueError:
        return False


def scripted(question: Q.Question, *, read: bool = True) -> tuple[ScriptedLLM, list[Request]]:
    """A model that makes the question's right decisions and reads the final prompt.

    With ``read=False`` (token counts) it answers ``1`` and gives the fixed replies of
    :func:`fixed_decisions` where the small-table prompts ask what the chain left open.
    """
    seen: list[Request] = []

    def reply(request: Request) -> str | list[str]:
        seen.append(request)
        site = request.call_site.rsplit("/", 1)[-1]
        if site == "plan":
            return question.plan
        if site == "sort_column" and question.sort:
            return question.sort
        if site == "final_query":
            return " " + read_answer(request.as_text(), question.read) if read else " 1"
        if not read:
            return fixed_decisions(request)
        raise AssertionError(f"{question.text}: no decision scripted for {site}")

    return ScriptedLLM(fn=reply), seen


# ----------------------------------------------------------------------------- tokens


def tokenizer() -> Callable[[str], int]:
    """Gemma 3's tokenizer (vocabulary only); word count when the model is not installed."""
    try:
        import llama_cpp

        from tablereason.llm.backends.model_files import default_model_path

        path = str(default_model_path())
        vocab = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
        return lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=True))
    except Exception as err:
        print(f"no Gemma tokenizer ({err}); counting words", file=sys.stderr)
        return lambda text: len(text.split())


def bench_tokens(sizes: Sequence[int]) -> dict[str, Any]:
    count = tokenizer()
    questions = Q.synthetic()
    per_size: dict[int, list[int]] = {}
    for size in sizes:
        table = Table.from_pandas(Q.orders(size))
        per_size[size] = []
        for question in questions:
            llm, seen = scripted(question, read=False)
            ChainOfTable(llm, task="wikitq").run(table, question.text)
            per_size[size].append(sum(count(r.as_text()) for r in seen))
        print(f"{size:>9} rows: {statistics.mean(per_size[size]):.0f} prompt tokens per question")
    base = sizes[-1]
    rows = []
    for i, question in enumerate(questions):
        tokens = [per_size[s][i] for s in sizes]
        counts = {str(s): t for s, t in zip(sizes, tokens, strict=True)}
        rows.append({"question": question.text, **counts})
    means = {s: statistics.mean(v) for s, v in per_size.items()}
    spread = max(means.values()) / min(means.values())
    ratios = ", ".join(f"{s}: {means[s] / means[base]:.3f}" for s in sizes)
    print(f"mean over the largest: {ratios}")
    print(f"max/min of the means: {spread:.3f}")
    return {"per_question": rows, "means": means, "max_over_min": spread}


# ----------------------------------------------------------------------------- correctness


def run_questions(
    tables: dict[str, tuple[Table, pd.DataFrame]], questions: Sequence[Q.Question]
) -> list[dict[str, Any]]:
    results = []
    for question in questions:
        table, frame = tables[question.table]
        llm, _ = scripted(question)
        start = time.perf_counter()
        prediction = ChainOfTable(llm, task="wikitq").run(table, question.text)
        seconds = time.perf_counter() - start
        gold = question.gold(frame)
        answer = prediction.answer[0] if prediction.answer else ""
        ok = prediction.error is None and matches(answer, gold)
        results.append(
            {
                "table": question.table,
                "rows": table.num_rows,
                "question": question.text,
                "answer": answer,
                "gold": sorted(gold) if isinstance(gold, set) else gold,
                "exact": ok,
                "seconds": round(seconds, 2),
                "chain": prediction.trace.steps[-1].arguments.get("chain"),
            }
        )
        mark = "ok " if ok else "BAD"
        print(f"{mark} {question.table} ({table.num_rows}) {question.text} -> {answer} [{gold}]")
    return results


def load_tables(rows: int) -> dict[str, tuple[Table, pd.DataFrame]]:
    """The questions' tables, each as a Table and as the text frame its gold reads."""
    tables: dict[str, tuple[Table, pd.DataFrame]] = {}
    for name in ("seattle-weather", "airports", "seattle-temps", "sf-temps"):
        path = Q.vega_csv(name)
        tables[name] = (Table.from_csv(path, escape=None), pd.read_csv(path, dtype=str))
    frame = Q.orders(rows)
    tables["orders"] = (Table.from_pandas(frame), frame)
    return tables


def bench_correct(rows: int) -> dict[str, Any]:
    tables = load_tables(rows)
    results = run_questions(tables, Q.public() + Q.synthetic())
    exact = sum(r["exact"] for r in results)
    print(f"exact: {exact} of {len(results)}")
    return {"results": results, "exact": exact, "questions": len(results)}


# ----------------------------------------------------------------------------- embedded model


class PeakRSS:
    """Samples this process's resident memory every few milliseconds; keeps the peak."""

    def __init__(self) -> None:
        self.peak = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def now() -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, self.now())

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.now())


def usable_condition(prediction: Any) -> bool | None:
    """Whether the run's select_row applied a usable condition (``None``: no select_row step).

    Usable: it parsed, named columns of the table (else the step is skipped with an
    error) and matched at least one row.
    """
    steps = [s for s in prediction.trace.steps if s.kind == "operation" and s.name == "select_row"]
    if not steps:
        return None
    return any(
        "condition" in s.arguments and not s.error and s.arguments.get("rows_after", 0) > 0
        for s in steps
    )


N_CTX = 8192
WARM_UP = "The table lists orders by region. "
"""Seven Gemma 3 tokens: the warm-up prompt repeats it to nearly fill the context."""


def model_one(path: Path, index: int, kind: str, constrain: bool = True) -> dict[str, Any]:
    """One question in this (fresh) process: load the model, then the CSV, then answer.

    Memory is measured from just before the CSV is loaded (the model and the DuckDB
    database already started) to the end of the answer. The model is warmed up with a
    prompt that nearly fills its context, so that its own working memory for a long
    prompt (the attention cache's pages, about 90 MB for 4,000 tokens, the same for any
    table) is paid before the baseline rather than counted as the table's.
    """
    from tablereason.api import load_table
    from tablereason.llm import LocalLlama

    question = Q.synthetic()[index]
    llm: LLM
    if kind == "local":
        llm = LocalLlama(n_ctx=N_CTX, n_threads=2)
        llm.complete(Request(prompt=WARM_UP * ((N_CTX - 512) // 7), max_tokens=1))
    else:
        llm = scripted(question)[0]
    from tablereason.table.storage import Store

    Store()  # the database engine starts before the baseline; its start is not the table's
    before = PeakRSS.now()
    with PeakRSS() as memory:
        start = time.perf_counter()
        table = load_table(path)
        load_s = time.perf_counter() - start
        start = time.perf_counter()
        method = ChainOfTable(llm, task="wikitq", constrain=constrain)
        prediction = method.run(table, question.text)
        seconds = time.perf_counter() - start
    return {
        "question": question.text,
        "load_s": round(load_s, 1),
        "seconds": round(seconds, 1),
        "answer": prediction.answer[0] if prediction.answer else "",
        "requests": prediction.trace.usage.requests,
        "prompt_tokens": prediction.trace.usage.prompt_tokens,
        "peak_growth": memory.peak - before,
        "usable_condition": usable_condition(prediction),
        "constrained": sum(1 for s in prediction.trace.steps if s.constraint),
        "reasks": sum(s.reasks for s in prediction.trace.steps),
        "chain": prediction.trace.steps[-1].arguments.get("chain"),
        "replies": [
            {"step": s.name, "raw": s.raw, "error": s.error}
            for s in prediction.trace.steps
            if s.raw and s.kind in ("plan", "operation")
        ],
        "error": prediction.error,
    }


def bench_model(
    rows: int, limit: int | None, kind: str = "local", constrain: bool = True
) -> dict[str, Any]:
    """The synthetic table as a CSV; each question in a fresh process (model, load, answer).

    ``kind="scripted"`` runs the same pipeline with the scripted right decisions
    instead, which isolates loading, memory and the DuckDB work from the model.
    """
    frame = Q.orders(rows)
    questions = Q.synthetic()[:limit]
    golds = [q.gold(frame) for q in questions]
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "orders.csv"
        frame.to_csv(path, index=False)
        del frame
        size = path.stat().st_size
        for index, gold in enumerate(golds):
            out = Path(folder) / f"q{index}.json"
            subprocess.run(
                [sys.executable, __file__, "model-one", "--index", str(index), "--llm", kind,
                 "--csv", str(path), "--out", str(out),
                 "--constrain", "on" if constrain else "off"],
                check=True,
            )  # fmt: skip
            run = json.loads(out.read_text())
            run["gold"] = sorted(gold) if isinstance(gold, set) else gold
            run["exact"] = matches(run["answer"], gold)
            run["peak_over_csv"] = round(run["peak_growth"] / size, 2)
            runs.append(run)
            print(json.dumps(run, default=str), flush=True)
    attempts = [r["usable_condition"] for r in runs if r["usable_condition"] is not None]
    summary = {
        "llm": kind,
        "constrain": constrain,
        "rows": rows,
        "csv_mb": round(size / 1e6, 1),
        "load_s": statistics.median(r["load_s"] for r in runs),
        "median_question_s": statistics.median(r["seconds"] for r in runs),
        "max_question_s": max(r["seconds"] for r in runs),
        "max_peak_over_csv": max(r["peak_over_csv"] for r in runs),
        "median_peak_over_csv": statistics.median(r["peak_over_csv"] for r in runs),
        "select_row_steps": len(attempts),
        "usable_conditions": sum(attempts),
        "exact": sum(r["exact"] for r in runs),
        "questions": len(runs),
    }
    print(json.dumps(summary))
    return {"summary": summary, "runs": runs}


def bench_conditions(rows: int, limit: int | None, constrain: bool) -> dict[str, Any]:
    """The synthetic questions with the embedded model loaded once and the CSV loaded once.

    What ``model`` measures per fresh process (memory, loading) is left out; this counts
    the decisions: how many runs applied a usable condition (it parsed, named columns of
    the table and matched at least one row), the re-asks and requests, and the time per
    question after loading.
    """
    from tablereason.api import load_table
    from tablereason.llm import LocalLlama

    frame = Q.orders(rows)
    questions = Q.synthetic()[:limit]
    golds = [q.gold(frame) for q in questions]
    llm = LocalLlama(n_ctx=N_CTX, n_threads=2)
    llm.load()
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "orders.csv"
        frame.to_csv(path, index=False)
        del frame
        table = load_table(path)
        for question, gold in zip(questions, golds, strict=True):
            llm.load().reset()  # each question's prompts are evaluated from scratch
            start = time.perf_counter()
            prediction = ChainOfTable(llm, task="wikitq", constrain=constrain).run(
                table, question.text
            )
            steps = prediction.trace.steps
            answer = prediction.answer[0] if prediction.answer else ""
            run = {
                "question": question.text,
                "seconds": round(time.perf_counter() - start, 1),
                "requests": prediction.trace.usage.requests,
                "prompt_tokens": prediction.trace.usage.prompt_tokens,
                "completion_tokens": prediction.trace.usage.completion_tokens,
                "usable_condition": usable_condition(prediction),
                "conditions": [
                    [s.arguments.get("condition"), s.arguments.get("rows_after"), s.error]
                    for s in steps
                    if s.kind == "operation" and s.name == "select_row"
                ],
                "constrained": sum(1 for s in steps if s.constraint),
                "reasks": sum(s.reasks for s in steps),
                "violations": sum(s.violations for s in steps),
                "chain": steps[-1].arguments.get("chain"),
                "replies": [
                    {"step": s.name, "raw": s.raw, "error": s.error}
                    for s in steps
                    if s.raw and s.kind in ("plan", "operation")
                ],
                "answer": answer,
                "gold": sorted(gold) if isinstance(gold, set) else gold,
                "exact": prediction.error is None and matches(answer, gold),
                "error": prediction.error,
            }
            runs.append(run)
            print(json.dumps(run, default=str), flush=True)
    usable = sum(bool(r["usable_condition"]) for r in runs)
    summary = {
        "constrain": constrain,
        "rows": rows,
        "questions": len(runs),
        "usable_conditions": usable,
        "select_row_steps": sum(r["usable_condition"] is not None for r in runs),
        "reasks": sum(r["reasks"] for r in runs),
        "violations": sum(r["violations"] for r in runs),
        "requests": sum(r["requests"] for r in runs),
        "prompt_tokens": sum(r["prompt_tokens"] for r in runs),
        "completion_tokens": sum(r["completion_tokens"] for r in runs),
        "median_question_s": statistics.median(r["seconds"] for r in runs),
        "exact": sum(r["exact"] for r in runs),
    }
    print(json.dumps(summary))
    return {"summary": summary, "runs": runs}


# ----------------------------------------------------------------------------- same prompts


def fixed_decisions(request: Request) -> str | list[str]:
    """Replies that ask every operation in turn and parse in both profiles."""
    site = request.call_site.rsplit("/", 1)[-1]
    text = request.as_text()
    block = text[text.rindex("/*") :]
    found = re.findall(r"^col : (.*)$", text, re.M)
    if found:
        header = found[-1].split(" | ")
    else:  # the paper profile's JSON block for column selection
        header = json.loads(re.findall(r'^  "columns": (\[.*\]),$', text, re.M)[-1])
    first = header[0]
    replies: dict[str, str] = {
        "plan": " f_add_column() -> f_select_row() -> f_select_column() -> f_group_column()"
        " -> f_sort_column() -> <END>",
        "add_column": " part\n"
        + "\n".join(f"row {n} : {int(n) % 3}" for n in re.findall(r"^row (\d+) :", block, re.M)),
        "select_row": "row 1, row 2])",
        "select_column": ", ".join(header[:2]) + "])",
        "group_column": f"{first})",
        "sort_column": f'{first}), the order is "large to small".',
        "final_query": " yes",
    }
    if request.messages is not None:  # the paper profile's formats
        replies.update(
            select_row="f_row([row 1, row 2])",
            select_column="f_col([" + ", ".join(h.lower() for h in header[:2]) + "])",
            group_column=f"f_group({first}).",
            sort_column=f"The datatype is Numerical. f_sort({first}), "
            'the order is "large to small".',
        )
    reply = replies.get(site, " 1")
    return [reply] * request.n if request.n > 1 else reply


def prompt_hashes(data: Path, n: int) -> dict[str, list[str]]:
    """sha256 of every prompt of the 50 + 50 benchmark examples under fixed decisions."""
    import bench_chain_of_table as B

    examples = B.tabfact_sample(data, n) + B.wikitq_sample(data, n)
    out: dict[str, list[str]] = {}
    for profile in ("efficient", "paper"):
        for example in examples:
            seen: list[str] = []

            def reply(request: Request, seen: list[str] = seen) -> str | list[str]:
                seen.append(hashlib.sha256(request.as_text().encode()).hexdigest()[:16])
                return fixed_decisions(request)

            method = ChainOfTable(ScriptedLLM(fn=reply), task=example["task"], profile=profile)
            method.run(example["table"], example["question"])
            out[f"{profile}/{example['id']}"] = seen
    return out


def _hashes_at(revision: str, data: Path, n: int, folder: Path) -> dict[str, list[str]]:
    """:func:`prompt_hashes` run on a clean checkout of ``revision`` (a git worktree)."""
    root = Path(__file__).resolve().parents[1]
    tree = folder / revision.replace("/", "_").replace("^", "_parent")
    subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(tree), revision],
                   check=True, capture_output=True)  # fmt: skip
    try:
        out = tree / "hashes.json"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run(
            [sys.executable, __file__, "prompt-hashes", "--n", str(n), "--data", str(data),
             "--out", str(out)], check=True, env=env,
        )  # fmt: skip
        return dict(json.loads(out.read_text()))
    finally:
        subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)],
                       check=False, capture_output=True)  # fmt: skip


def bench_same_prompts(before: str, after: str | None, data: Path, n: int) -> dict[str, Any]:
    """Compare every prompt of the 50 + 50 examples at ``before`` and ``after``.

    ``after=None`` uses the working tree this script runs from.
    """
    with tempfile.TemporaryDirectory() as folder:
        here = prompt_hashes(data, n) if after is None else _hashes_at(after, data, n, Path(folder))
        there = _hashes_at(before, data, n, Path(folder))
    differ = sorted(k for k in here if here[k] != there.get(k))
    prompts = sum(len(v) for v in here.values())
    print(f"{len(here)} runs, {prompts} prompts; runs whose prompts differ: {len(differ)}")
    return {
        "runs": len(here),
        "prompts": prompts,
        "differ": differ,
        "before": before,
        "after": after,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "what",
        choices=[
            "tokens", "correct", "model", "model-one", "conditions", "same-prompts",
            "prompt-hashes",
        ],
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--questions", type=int, default=None, help="model: first N questions")
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--csv", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--llm", choices=["local", "scripted"], default="local", help="model: which"
    )
    parser.add_argument(
        "--constrain", choices=["on", "off"], default="on", help="model: send each grammar"
    )
    parser.add_argument("--before", default="HEAD", help="same-prompts: revision to compare with")
    parser.add_argument("--after", default=None, help="same-prompts: revision (default: this tree)")
    parser.add_argument("--n", type=int, default=50, help="same-prompts: examples per dataset")
    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--data", type=Path, default=data)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    if args.what == "tokens":
        result = bench_tokens(SIZES)
    elif args.what == "correct":
        result = bench_correct(args.rows)
    elif args.what == "model":
        result = bench_model(args.rows, args.questions, args.llm, args.constrain == "on")
    elif args.what == "conditions":
        result = bench_conditions(args.rows, args.questions, args.constrain == "on")
    elif args.what == "model-one":
        result = model_one(args.csv, args.index, args.llm, args.constrain == "on")
    elif args.what == "same-prompts":
        result = bench_same_prompts(args.before, args.after, args.data, args.n)
    else:
        result = prompt_hashes(args.data, args.n)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, default=str))
    return result


if __name__ == "__main__":
    main()
