"""What a grammar costs the embedded model (Gemma 3 270M, a 262k-token vocabulary).

Run (holding the shared lock, so no other benchmark runs meanwhile):

    flock /tmp/tablereason-bench.lock python benchmarks/bench_grammar.py --repeats 5

1. Slots: for each constrained slot (a choice of 6, 60 or 600 column names, the 600 as
   flat alternatives rather than a trie, yes/no, a short regular expression, a JSON
   object), the constrained call and, as its baseline in
   the same run, the same prompt unconstrained for the same number of tokens, in turn
   (baseline, constrained, baseline, ...). Generation seconds, tokens, tokens/s, and the
   grammar's cost per token; the prompt is evaluated before (llama.cpp keeps it).
2. Reasoning then a slot ("Answer: " then one of six names): free text and the slot in one
   reply, three ways: unconstrained (the baseline), the slot constrained after the marker
   (what the embedded backend does: the free part without a grammar), and one grammar over
   the whole reply (free text up to the marker, then the slot, as a server's ``grammar``
   field would run it).
"""

from __future__ import annotations

import argparse
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


def bench_slots(llm: LocalLlama, repeats: int) -> list[dict[str, Any]]:
    rows = []
    for name, question, constraint, max_tokens in SLOTS:
        prompt = table_prompt(question)
        constrained = Request(prompt=prompt, max_tokens=max_tokens, constraint=constraint)
        timed(llm, constrained)  # evaluates the prompt and builds the grammar once
        base_s, cons_s, base_n, cons_n = [], [], [], []
        text = ""
        for _ in range(repeats):
            seconds, tokens, text = timed(llm, constrained)
            assert satisfies(constraint, text), text
            baseline = Request(prompt=prompt, max_tokens=max(1, tokens))
            b_seconds, b_tokens, _ = timed(llm, baseline)
            cons_s.append(seconds)
            cons_n.append(tokens)
            base_s.append(b_seconds)
            base_n.append(b_tokens)
        rows.append(
            {
                "slot": name,
                "reply": text,
                "tokens": statistics.median(cons_n),
                "baseline_tokens": statistics.median(base_n),
                "seconds": statistics.median(cons_s),
                "baseline_seconds": statistics.median(base_s),
            }
        )
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
    llm = LocalLlama(n_ctx=4096, n_threads=args.threads)
    llm.load()
    slots = bench_slots(llm, args.repeats)
    reasoning = bench_reasoning(llm, args.repeats)
    load_after = os.getloadavg()[0]
    print(
        f"load average {load_before:.1f} -> {load_after:.1f}, threads {args.threads}, "
        f"repeats {args.repeats} (medians)\n"
    )
    print("| slot | tokens | constrained | baseline (same tokens) | tokens/s | grammar per token |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in slots:
        tps = row["tokens"] / row["seconds"]
        base_tps = row["baseline_tokens"] / row["baseline_seconds"]
        extra = (row["seconds"] - row["baseline_seconds"]) / max(row["tokens"], 1)
        print(
            f"| {row['slot']} | {row['tokens']:g} | {row['seconds']:.3f} s | "
            f"{row['baseline_seconds']:.3f} s ({row['baseline_tokens']:g} tokens) | "
            f"{tps:.1f} vs {base_tps:.1f} ({row['seconds'] / row['baseline_seconds']:.2f}x) | "
            f"{1000 * extra:.0f} ms |"
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
        payload = {"load": [load_before, load_after], "slots": slots, "reasoning": reasoning}
        Path(args.out).write_text(json.dumps(payload, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
