"""What a grammar costs the embedded model (Gemma 3 270M, a 262k-token vocabulary).

Run (holding the shared lock, so no other benchmark runs meanwhile):

    flock /tmp/tablereason-bench.lock python benchmarks/bench_grammar.py --repeats 5

1. Slots: for each constrained slot (a choice of 6, 60 or 600 column names, the 600 as
   flat alternatives rather than a trie, yes/no, a short regular expression, a JSON
   object), the constrained call and, as its baseline in
   the same run, the same prompt unconstrained for the same number of tokens, in turn
   (full grammar, lazy grammar, baseline, ...): the grammar applied to the whole vocabulary
   at every token (``grammar_sampling="full"``, llama-cpp-python's way) and checked on
   the chosen token first (``"lazy"``, the default), one model loaded for each.
   Generation seconds, tokens, the grammar's cost per token, whether both ways wrote the
   same; the prompt is evaluated before (llama.cpp keeps it).
2. Reasoning then a slot ("Answer: " then one of six names): free text and the slot in one
   reply, three ways: unconstrained (the baseline), the slot constrained after the marker
   (what the embedded backend does: the free part without a grammar), and one grammar over
   the whole reply (free text up to the marker, then the slot, as a server's ``grammar``
   field would run it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablereason.llm import Grammar, JSONSchema, LocalLlama, OneOf, Regex, Request  # noqa: E402
from tablereason.llm.constraints import Constraint, satisfies, to_gbnf  # noqa: E402
from tablereason.llm.constraints.gbnf import literal  # noqa: E402

COLUMNS = ["Year", "Team", "Wins", "Losses", "Coach", "Stadium"]


def table_prompt(question: str, rows: int = 20) -> str:
    """A table in the PIPE form the methods use, then a question."""
    lines = ["col : " + " | ".join(COLUMNS)]
    for i in range(1, rows + 1):
        lines.append(f"row {i} : {1990 + i} | Team{i} | {i % 7} | {i * 3 % 5} | Coach{i} | Park{i}")
    return "Table:\n" + "\n".join(lines) + f"\n\nQuestion: {question}\n"


def many_names(count: int) -> list[str]:
    return COLUMNS + [f"{name} {i}" for i in range(count // 6) for name in COLUMNS][: count - 6]


SLOTS: list[tuple[str, str, Constraint, int]] = [
    ("choice of 6 names", "Which column holds the wins?\nColumn:", OneOf(options=COLUMNS), 8),
    (
        "choice of 60 names",
        "Which column holds the wins?\nColumn:",
        OneOf(options=many_names(60)),
        8,
    ),
    (
        "choice of 600 names",
        "Which column holds the wins?\nColumn:",
        OneOf(options=many_names(600)),
        8,
    ),
    (
        "the same 600, one alternative each (no trie)",
        "Which column holds the wins?\nColumn:",
        Grammar(gbnf="root ::= " + " | ".join(literal(n) for n in many_names(600))),
        8,
    ),
    ("yes/no", "Did Team3 win more games than Team4?\nAnswer:", OneOf(options=("yes", "no")), 4),
    (
        "regex (row list)",
        "Which rows mention Coach2 or Coach5?\nRows:",
        Regex(pattern=r"row \d+(, row \d+){0,3}"),
        24,
    ),
    (
        "JSON object",
        "Which column and row hold the wins of Team3?\nAnswer in JSON:",
        JSONSchema(
            json_schema={
                "type": "object",
                "properties": {"column": {"enum": COLUMNS}, "row": {"type": "integer"}},
                "required": ["column", "row"],
            }
        ),
        24,
    ),
]


def timed(llm: LocalLlama, request: Request) -> tuple[float, int, str]:
    started = time.perf_counter()
    completion = llm.complete(request)
    return time.perf_counter() - started, completion.usage.completion_tokens, completion.text


def bench_slots(llms: dict[str, LocalLlama], repeats: int) -> list[dict[str, Any]]:
    """Each slot under each way of grammar sampling, and unconstrained, in turn."""
    rows = []
    free = next(iter(llms.values()))
    for name, question, constraint, max_tokens in SLOTS:
        prompt = table_prompt(question)
        constrained = Request(prompt=prompt, max_tokens=max_tokens, constraint=constraint)
        for llm in llms.values():
            timed(llm, constrained)  # evaluates the prompt and builds the grammar once
        seconds: dict[str, list[float]] = {way: [] for way in [*llms, "baseline"]}
        tokens: dict[str, list[int]] = {way: [] for way in seconds}
        texts: dict[str, str] = {}
        for _ in range(repeats):
            for way, llm in llms.items():
                took, count, texts[way] = timed(llm, constrained)
                assert satisfies(constraint, texts[way]), texts[way]
                seconds[way].append(took)
                tokens[way].append(count)
            baseline = Request(prompt=prompt, max_tokens=max(1, tokens[way][-1]))
            took, count, _ = timed(free, baseline)
            seconds["baseline"].append(took)
            tokens["baseline"].append(count)
        row: dict[str, Any] = {"slot": name, "replies": texts}
        row["same_replies"] = len(set(texts.values())) == 1
        for way in seconds:
            row[f"{way}_seconds"] = statistics.median(seconds[way])
            row[f"{way}_tokens"] = statistics.median(tokens[way])
        rows.append(row)
    return rows


def bench_reasoning(llm: LocalLlama, repeats: int) -> list[dict[str, Any]]:
    prompt = table_prompt("Which column holds the wins? Think, then write 'Answer: ' and it.")
    prompt += "Thinking:"
    slot = OneOf(options=COLUMNS, after="Answer: ")
    request = Request(prompt=prompt, max_tokens=32, constraint=slot)
    whole = llm._grammar(to_gbnf(slot))  # one grammar over free text and slot
    llama = llm.load()

    def whole_reply() -> tuple[float, int, str]:
        started = time.perf_counter()
        with llm._lock:
            raw = llm._generate(llama, request, False, 32, 0, grammar=whole)
        seconds = time.perf_counter() - started
        return seconds, int(raw["usage"]["completion_tokens"]), str(raw["choices"][0]["text"])

    ways = {
        "unconstrained (baseline)": lambda: timed(
            llm, request.model_copy(update={"constraint": None})
        ),
        "slot after the marker (two steps)": lambda: timed(llm, request),
        "one grammar over the whole reply": whole_reply,
    }
    for way in ways.values():
        way()  # warm: the prompt is evaluated once
    samples: dict[str, list[tuple[float, int, str]]] = {name: [] for name in ways}
    for _ in range(repeats):
        for name, way in ways.items():
            samples[name].append(way())
    return [
        {
            "way": name,
            "seconds": statistics.median(s for s, _, _ in got),
            "tokens": statistics.median(n for _, n, _ in got),
            "reply": got[-1][2],
        }
        for name, got in samples.items()
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", help="also write the figures here as JSON")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    llms = {
        way: LocalLlama(n_ctx=4096, n_threads=args.threads, grammar_sampling=way)
        for way in ("full", "lazy")
    }
    for one in llms.values():
        one.load()
    llm = llms["lazy"]
    slots = bench_slots(llms, args.repeats)
    reasoning = bench_reasoning(llm, args.repeats)
    load_after = os.getloadavg()[0]
    print(
        f"load average {load_before:.1f} -> {load_after:.1f}, threads {args.threads}, "
        f"repeats {args.repeats} (medians)\n"
    )
    print(
        "| slot | tokens | baseline | full grammar | lazy grammar | grammar per token, full "
        "| lazy | lazy / full seconds | same replies |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in slots:
        base = row["baseline_seconds"]
        extra = {
            way: (row[f"{way}_seconds"] - base) / max(row[f"{way}_tokens"], 1)
            for way in ("full", "lazy")
        }
        print(
            f"| {row['slot']} | {row['lazy_tokens']:g} | {base:.3f} s | "
            f"{row['full_seconds']:.3f} s | {row['lazy_seconds']:.3f} s | "
            f"{1000 * extra['full']:.0f} ms | {1000 * extra['lazy']:.0f} ms | "
            f"{row['lazy_seconds'] / row['full_seconds']:.2f}x | {row['same_replies']} |"
        )
    counts = llm.grammar_counts
    print(
        f"\nlazy: {counts.tokens} tokens under a grammar, {counts.refused} free choices "
        f"refused, {counts.masked} whole-vocabulary masks"
    )
    print("\n| reasoning then a slot | seconds | tokens | vs baseline |")
    print("| --- | --- | --- | --- |")
    base = reasoning[0]["seconds"]
    for row in reasoning:
        print(
            f"| {row['way']} | {row['seconds']:.3f} | {row['tokens']:g} | "
            f"{row['seconds'] / base:.2f}x |"
        )
    for row in reasoning:
        print(f"  {row['way']}: {row['reply']!r}")
    if args.out:
        payload = {
            "load": [load_before, load_after],
            "slots": slots,
            "reasoning": reasoning,
            "lazy_counts": dataclasses.asdict(llm.grammar_counts),
        }
        Path(args.out).write_text(json.dumps(payload, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
