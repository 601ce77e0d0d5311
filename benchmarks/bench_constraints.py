"""Chain-of-Table (efficient profile) with constraints off and on, in one run, per question.

For each TabFact and WikiTQ test question (the fixed-seed samples of
``bench_chain_of_table.py``, demo tables left out), the question runs twice, once with
every reply unconstrained and once with each decision's grammar sent to the model
(``constrain=False`` / ``True``), in alternating order, the model's evaluated prompt
cleared before each run so that neither run reuses the other's work. Per run it records
the replies that could not be parsed (or broke their constraint), the re-asks, the
invalid decisions (an unknown column, a row out of range, a condition that does not
parse or names no column of the table; checked again here on every reply), requests,
prompt and completion tokens, seconds, the answer and whether it is right. Every run is
appended to the log as it finishes, so an interrupted run resumes where it stopped.

    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/bench_constraints.py \\
        --tabfact 50 --wikitq 50 --log constraints.jsonl
    .venv/bin/python benchmarks/bench_constraints.py --summarise constraints.jsonl
    .venv/bin/python benchmarks/bench_constraints.py --llm scripted --tabfact 2 --wikitq 2 \\
        --log /tmp/check.jsonl            # the harness alone, no model
    .venv/bin/python benchmarks/bench_constraints.py --requests constraints.jsonl \\
        --paper docs/benchmarks/logs/chain_of_table/paper_tabfact.jsonl   # against the paper
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_chain_of_table import DATA, correct, tabfact_sample, wikitq_sample, wikitq_scorer

from tablereason.errors import ParseError, SQLError, TableReasonError
from tablereason.methods import ChainOfTable
from tablereason.methods.chain_of_table.large import column_expression, condition_text
from tablereason.methods.chain_of_table.parse import (
    OPERATION_NAMES,
    leading_column,
    list_body,
    parse_chain_arguments,
    shown,
    split_names,
)
from tablereason.operations.row_expressions import parse_expression, resolve_columns
from tablereason.trace.record import Trace

MODES = ("off", "on")


# ----------------------------------------------------------------------------- invalid decisions


def _rows_invalid(text: str, rows: int) -> list[str]:
    """Row numbers that do not exist in a ``row i, row j`` list (``*`` is fine)."""
    body = list_body(text).strip()
    if body in ("*", ""):
        return [] if body == "*" else ["no rows named"]
    bad = []
    for item in body.split(","):
        words = item.strip().removeprefix("row").strip()
        if not words.isdigit() or not 1 <= int(words) <= rows:
            bad.append(f"row {item.strip()!r} of {rows}")
    return bad


def _columns_invalid(text: str, columns: Sequence[str]) -> list[str]:
    """Listed names that are no column (a name counts as the prompt shows it, too)."""
    known = set(columns) | {shown(c) for c in columns}
    if split_names(list_body(text).strip(), sorted(known)) is not None:
        return []  # names joined by ", " (a name may hold a comma itself)
    items = [i.strip() for i in list_body(text).split(",") if i.strip()]
    return [f"unknown column {i!r}" for i in items if i not in known]


def _condition_invalid(text: str, table: Any) -> list[str]:
    condition = text.strip().removeprefix("where").strip()
    if condition in ("*", ""):
        return [] if condition == "*" else ["empty condition"]
    try:
        names = resolve_columns(table, parse_expression(condition))
    except (SQLError, TableReasonError) as err:
        return [f"condition {condition!r}: {str(err)[:80]}"]
    return [] if names else [f"condition {condition!r} names no column"]


def _argument_invalid(op: str, text: str, table: Any, large: bool) -> list[str]:
    """What is invalid in the argument text a chain or a reply gave ``op`` on ``table``."""
    columns = table.columns
    if op == "select_row":
        return _condition_invalid(text, table) if large else _rows_invalid(text, table.num_rows)
    if op == "select_column":
        return _columns_invalid(text, columns)
    if op in ("group_column", "sort_column"):
        return [] if leading_column(text, columns) else [f"unknown column in {text[:40]!r}"]
    if op == "add_column" and (large or "=" in text):  # an expression, in either mode
        try:
            _, expression = column_expression(text + ")")
            resolve_columns(table, parse_expression(expression))
        except (ParseError, SQLError, TableReasonError) as err:
            return [f"expression {text[:60]!r}: {str(err)[:60]}"]
    return []


def invalid_decisions(trace: Trace, *, large: bool = False) -> list[str]:
    """Every decision of a run that names what its table lacks, checked on the raw replies.

    A plan's chain arguments are checked against the table the plan was made on; an
    operation's own replies against the table it ran on. A reply that could not be
    read at all is an unparseable reply, counted apart.
    """
    found: list[str] = []
    table = trace.steps[0].table
    for step in trace.steps[1:]:
        if step.kind == "plan" and step.raw:
            for op, text in parse_chain_arguments(step.raw[-1]).items():
                if op in OPERATION_NAMES:
                    found += [f"plan {op}: {p}" for p in _argument_invalid(op, text, table, large)]
        elif step.kind == "operation" and step.raw and step.name in OPERATION_NAMES:
            text = step.raw[-1]
            if step.name == "select_row" and large:
                try:
                    text = condition_text(text)
                except ParseError:
                    text = ""
            if text.strip():
                found += [
                    f"{step.name}: {p}" for p in _argument_invalid(step.name, text, table, large)
                ]
        if step.kind == "operation" and step.table is not None:
            table = step.table
    return found


# ----------------------------------------------------------------------------- one run


def run_one(llm: Any, example: dict[str, Any], mode: str, scorer: Any) -> dict[str, Any]:
    """One question in one mode: its counts, time and answer."""
    reset = getattr(llm, "reset", None)
    if callable(reset):
        reset()  # the next prompt is evaluated from scratch, in both modes alike
    method = ChainOfTable(llm, task=example["task"], profile="efficient", constrain=mode == "on")
    started = time.perf_counter()
    prediction = method.run(example["table"], example["question"])
    seconds = time.perf_counter() - started
    steps = prediction.trace.steps
    usage = prediction.trace.usage
    large = bool(steps and steps[0].note and steps[0].note.startswith("large-table mode"))
    invalid = invalid_decisions(prediction.trace, large=large)
    record = {
        "id": example["id"],
        "task": example["task"],
        "mode": mode,
        "rows": example["table"].num_rows,
        "seconds": round(seconds, 2),
        "requests": usage.requests,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "unparsed": sum(s.unparsed for s in steps),
        "violations": sum(s.violations for s in steps),
        "reasks": sum(s.reasks for s in steps),
        "constrained": sum(1 for s in steps if s.constraint),
        "invalid": len(invalid),
        "invalid_detail": invalid,
        "answer": prediction.answer,
        "error": prediction.error,
        "chain": steps[-1].arguments.get("chain") if steps else None,
        "replies": [{"step": s.name, "raw": s.raw, "error": s.error} for s in steps if s.raw],
    }
    record["correct"] = correct(record, example, scorer)
    return record


class Reset:
    """The embedded model with its evaluated prompt cleared on request."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.name, self.model = llm.name, llm.model

    def reset(self) -> None:
        self.llm.load().reset()

    def complete(self, request: Any) -> Any:
        return self.llm.complete(request)

    async def acomplete(self, request: Any) -> Any:  # pragma: no cover
        return self.llm.complete(request)

    @property
    def capabilities(self) -> Any:
        return self.llm.capabilities


def make_llm(kind: str) -> Any:
    if kind == "local":
        from tablereason.llm import LocalLlama

        llm = LocalLlama(n_ctx=16384)
        llm.load()
        return Reset(llm)
    from tablereason.llm import ScriptedLLM
    from tablereason.llm.base import Capabilities

    class Enforcing(ScriptedLLM):  # a harness check: replies that meet every grammar
        @property
        def capabilities(self) -> Capabilities:
            return Capabilities(constraints=frozenset({"grammar"}))

    def reply(request: Any) -> str:
        site = request.call_site.rsplit("/", 1)[-1]
        table = {"plan": " f_select_row(*) -> <END>", "select_row": "*])"}
        return table.get(site, " YES" if "Statement:" in request.as_text()[-400:] else " 1")

    return Enforcing(fn=reply)


# ----------------------------------------------------------------------------- summaries


def wilson(right: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion.

    Example:
        >>> [round(x, 3) for x in wilson(32, 50)]
        [0.501, 0.759]
    """
    if n == 0:
        return (0.0, 0.0)
    p = right / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def read_log(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Records of the logs; a later record of the same (mode, question) replaces an earlier one."""
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                kept[(record.get("mode", ""), record["id"])] = record
    return list(kept.values())


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per mode and task: means per question, totals, accuracy with its interval; the time ratio.

    Only questions run in both modes count, so both modes are over the same questions.
    """
    modes_of: dict[str, set[str]] = {}
    for r in records:
        modes_of.setdefault(r["id"], set()).add(r["mode"])
    records = [r for r in records if modes_of[r["id"]] >= set(MODES)]
    rows = []
    for task in ("tabfact", "wikitq", "all"):
        for mode in MODES:
            items = [r for r in records if r["mode"] == mode and task in (r["task"], "all")]
            if not items:
                continue
            right = sum(bool(r["correct"]) for r in items)
            low, high = wilson(right, len(items))

            def mean(key: str, items: list[dict[str, Any]] = items) -> float:
                return round(statistics.mean(r[key] for r in items), 2)

            rows.append({
                "task": task, "mode": mode, "n": len(items),
                "unparsed": sum(r["unparsed"] for r in items),
                "violations": sum(r["violations"] for r in items),
                "reasks": sum(r["reasks"] for r in items),
                "invalid": sum(r["invalid"] for r in items),
                "requests": mean("requests"), "prompt_tokens": mean("prompt_tokens"),
                "completion_tokens": mean("completion_tokens"), "seconds": mean("seconds"),
                "accuracy": round(right / len(items), 3),
                "ci95": f"{low:.3f}-{high:.3f}", "right": right,
                "errors": sum(1 for r in items if r["error"]),
            })  # fmt: skip
    by = {(r["mode"], r["id"]): r for r in records}
    pairs = [i for m, i in by if m == "on" and ("off", i) in by]
    ratio = {}
    if pairs:
        on = sum(by[("on", i)]["seconds"] for i in pairs)
        off = sum(by[("off", i)]["seconds"] for i in pairs)
        each = [by[("on", i)]["seconds"] / max(by[("off", i)]["seconds"], 1e-9) for i in pairs]
        ratio = {
            "pairs": len(pairs),
            "seconds_on_over_off": round(on / off, 3),
            "median_question_ratio": round(statistics.median(each), 3),
        }
    return {"rows": rows, "time": ratio, "plans": openings(records)}


def openings(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per mode: questions whose first chain opens with add_column, and add-column requests.

    The first reply of a run is its plan (a chain, recorded under the step it chose); an
    add-column request is a later reply of that step that is no chain (its ``row i :
    value`` lines; a re-ask counts again).
    """
    out: dict[str, dict[str, int]] = {}
    for mode in MODES:
        items = [r for r in records if r["mode"] == mode]
        first = [str((r["replies"][0]["raw"] or [""])[0]).strip() for r in items if r["replies"]]
        calls = [
            text
            for r in items
            for reply in r["replies"][1:]
            if reply["step"] == "add_column"
            for text in reply["raw"] or []
            if "->" not in str(text)
        ]
        out[mode] = {
            "questions": len(items),
            "opens_with_add_column": sum(f.startswith("f_add_column") for f in first),
            "add_column_requests": len(calls),
        }
    return out


def markdown(rows: list[dict[str, Any]]) -> str:
    cols = [
        "task", "mode", "n", "unparsed", "violations", "reasks", "invalid", "requests",
        "prompt_tokens", "completion_tokens", "seconds", "accuracy", "ci95", "errors",
    ]  # fmt: skip
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def requests_against_paper(
    records: list[dict[str, Any]], paper: list[dict[str, Any]], ids: Sequence[str]
) -> dict[str, Any]:
    """The efficient profile's requests over the paper profile's on the same questions.

    Per mode over the questions of ``ids`` the log holds (all of them, or as many as
    a run reached: ``questions`` says how many).
    """
    papers = {r["id"]: r for r in paper if r.get("profile") == "paper" and not r.get("timing")}
    missing = [i for i in ids if i not in papers]
    if missing:
        raise SystemExit(f"no paper record for {missing}")
    total = sum(papers[i]["requests"] for i in ids)
    out: dict[str, Any] = {"questions": len(ids), "paper_requests": total}
    out["floor"] = round(2 * len(ids) / total, 3)
    for mode in MODES:
        mine = {r["id"]: r for r in records if r["mode"] == mode}
        done = [i for i in ids if i in mine]  # all of them, or the part a run reached
        if done:
            spent = sum(mine[i]["requests"] for i in done)
            paid = sum(papers[i]["requests"] for i in done)
            out[mode] = {
                "questions": len(done),
                "requests": spent,
                "paper_requests": paid,
                "per_question": round(spent / len(done), 2),
                "ratio": round(spent / paid, 3),
                "floor": round(2 * len(done) / paid, 3),
                "prompt_tokens_ratio": round(
                    sum(mine[i]["prompt_tokens"] for i in done)
                    / sum(papers[i]["prompt_tokens"] for i in done),
                    3,
                ),
                "over_two": {i: mine[i]["requests"] for i in done if mine[i]["requests"] > 2},
            }
    return out


def interleave(first: Sequence[Any], second: Sequence[Any]) -> list[Any]:
    """Alternate two samples, so that a run stopped early holds as many of each.

    Example:
        >>> interleave([1, 2, 3], ["a"])
        [1, 'a', 2, 3]
    """
    out: list[Any] = []
    for i in range(max(len(first), len(second))):
        out += [s[i] for s in (first, second) if i < len(s)]
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabfact", type=int, default=50)
    parser.add_argument("--wikitq", type=int, default=50)
    parser.add_argument("--llm", choices=["local", "scripted"], default="local")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--log", type=Path, help="JSON lines, appended; a rerun resumes it")
    parser.add_argument("--limit-s", type=float, default=None,
                        help="stop starting questions after this many seconds")  # fmt: skip
    parser.add_argument("--summarise", type=Path, nargs="+", help="only summarise these logs")
    parser.add_argument("--requests", type=Path, nargs="+", help="logs to set against --paper")
    parser.add_argument("--paper", type=Path, nargs="+", help="paper-profile logs")
    parser.add_argument("--prefer", type=Path, nargs="+",
                        help="run the TabFact questions these logs hold first")  # fmt: skip
    parser.add_argument("--first-tabfact", type=int, default=12,
                        help="--requests: the first N TabFact questions of the sample "
                        "that the paper logs hold")  # fmt: skip
    args = parser.parse_args(argv)
    if args.summarise:
        summary = summarise(read_log(args.summarise))
        print(markdown(summary["rows"]))
        print(json.dumps(summary["time"]))
        print(json.dumps(summary["plans"]))
        return summary
    if args.requests:
        lines = [line for p in args.paper for line in p.read_text().splitlines()]
        paper = [json.loads(line) for line in lines if line]
        held = {r["id"] for r in paper if r.get("profile") == "paper" and not r.get("timing")}
        sample = [e["id"] for e in tabfact_sample(args.data, 50)]
        ids = [i for i in sample if i in held][: args.first_tabfact]
        result = requests_against_paper(read_log(args.requests), paper, ids)
        print(json.dumps(result, indent=1))
        return result
    llm = make_llm(args.llm)
    scorer = wikitq_scorer(args.data)
    tabfact = tabfact_sample(args.data, args.tabfact)
    if args.prefer:  # the TabFact questions those logs hold first, in the sample's order
        held = {json.loads(line)["id"] for p in args.prefer for line in p.read_text().splitlines()}
        tabfact = [e for e in tabfact if e["id"] in held] + [
            e for e in tabfact if e["id"] not in held
        ]
    examples = interleave(tabfact, wikitq_sample(args.data, args.wikitq))
    logged = read_log([args.log]) if args.log and args.log.exists() else []
    done = {(r["mode"], r["id"]) for r in logged}
    started = time.perf_counter()
    for index, example in enumerate(examples):
        order = MODES if index % 2 == 0 else MODES[::-1]
        for mode in order:
            if (mode, example["id"]) in done:
                continue
            if args.limit_s is not None and time.perf_counter() - started > args.limit_s:
                print("time limit reached; rerun to resume", file=sys.stderr)
                return {}
            record = run_one(llm, example, mode, scorer)
            if args.log:
                with args.log.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            keys = ("id", "mode", "seconds", "requests", "unparsed", "invalid", "correct", "error")
            print(json.dumps({k: record[k] for k in keys}, default=str), flush=True)
    if args.log:
        summary = summarise(read_log([args.log]))
        print(markdown(summary["rows"]))
        print(json.dumps(summary["time"]))
        return summary
    return {}


if __name__ == "__main__":
    main()
