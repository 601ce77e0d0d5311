"""The composed methods on scripted noisy models: votes against their exact prediction.

    .venv/bin/python benchmarks/bench_strategies.py votes --questions 2000
    .venv/bin/python benchmarks/bench_strategies.py critic --questions 2000

``votes``: every sample of a question is right with probability p (textual paths) or
p_code (symbolic ones) and otherwise one of two wrong values, independently
(tests/support/noisy_votes.py). For each p in {0.3, 0.5, 0.7}: self_consistency (k=5
Chain-of-Table samples) and mix_sc (5 Chain-of-Table + 5 Text-to-SQL samples, the SQL
run in the sandbox's worker, at p_code = p - 0.2) over ``--questions`` questions (the
default tests check p_code = p on fewer); the accuracy is compared with the exact
prediction of the vote's rules, and said to hold when it lies in the prediction's 95%
interval. ``critic``: table_critic on
scripted chains of which half have one planted wrong step (the first plan selects the
wrong row): how many planted chains it fixes and how many right chains it changes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.noisy_votes import (
    critic_llm,
    example_of,
    interval,
    noisy_llm,
    predicted_accuracy,
    questions,
    score,
)

from tablereason.methods import build_method
from tablereason.table import Table


def _vote_row(
    method: str, p: float, p_code: float | None, n: int, **options: Any
) -> dict[str, Any]:
    asked = questions(n, 2, seed=2027)
    llm = noisy_llm(asked, p, p_code)
    built = build_method(method, llm, task="wikitq", workers=1, **options)
    started = time.perf_counter()
    right = sum(score(built.run(example_of(q)).answer, example_of(q)) for q in asked)
    seconds = time.perf_counter() - started
    if method == "mix_sc":
        k = options["k"]
        chances = [p] * k + [p if p_code is None else p_code] * k
        predicted = predicted_accuracy(chances, ["text"] * k + ["code"] * k, 2, "text")
    else:
        predicted = predicted_accuracy(p, ["sample"] * options["k"], 2, None)
    accuracy = right / n
    half = interval(predicted, n)
    return {
        "method": method, "p": p, "p_code": p_code, "questions": n,
        "accuracy": round(accuracy, 4), "predicted": round(predicted, 4),
        "interval": [round(predicted - half, 4), round(predicted + half, 4)],
        "holds": abs(accuracy - predicted) <= half, "requests": len(llm.requests),
        "seconds": round(seconds, 1),
    }  # fmt: skip


def votes(n: int) -> list[dict[str, Any]]:
    """self_consistency and mix_sc against the vote's prediction, for each p (a line each)."""
    rows = []
    for p in (0.3, 0.5, 0.7):
        rows.append(_vote_row("self_consistency", p, None, n, inner="chain_of_table", k=5))
        print(json.dumps(rows[-1]), flush=True)
    for p in (0.3, 0.5, 0.7):
        p_code = round(p - 0.2, 1)  # paths that differ: the textual tie rule is worth something
        rows.append(_vote_row("mix_sc", p, p_code, n, symbolic="text_to_sql", k=5))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def critic(n: int) -> dict[str, Any]:
    """table_critic on scripted chains, half with a planted wrong step."""
    table = Table.from_records(["city", "n"], [["c1", "1"], ["c2", "2"], ["c3", "3"]])
    plant = {f"q{i}": i % 2 == 0 for i in range(n)}
    llm = critic_llm(plant)
    method = build_method("table_critic", llm, task="wikitq", rounds=2)
    fixed = changed = 0
    started = time.perf_counter()
    for question, wrong in plant.items():
        expected = [f"c{int(question[1:]) % 3 + 1}"]
        prediction = method.run(table, f"what is the city of {question}?")
        if wrong:
            fixed += prediction.answer == expected
        else:
            changed += prediction.answer != expected or len(prediction.trace.runs) != 1
    planted = sum(plant.values())
    row = {
        "method": "table_critic", "chains": n, "planted": planted, "fixed": fixed,
        "fixed_share": round(fixed / planted, 4), "right_chains_changed": changed,
        "requests": len(llm.requests), "seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["votes", "critic"])
    parser.add_argument("--questions", type=int, default=2000)
    args = parser.parse_args()
    if args.what == "votes":
        votes(args.questions)
    else:
        critic(args.questions)


if __name__ == "__main__":
    main()
