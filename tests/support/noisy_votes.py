"""Scripted noisy models for the composed methods, and the vote's exact prediction.

Every sample of a question is right with probability ``p`` and otherwise gives one of
``wrong`` wrong values, chosen uniformly and independently (a draw from the question,
the request's seed and the kind of path, so each sample of a composed run draws for
itself and a rerun draws the same). Right and wrong values come in surface forms the
metric scores alike (``1985``, ``1985.``, ``1985.0``; ``Oslo``, ``oslo``), so a vote
that compared raw texts would split them.

:func:`predicted_accuracy` computes exactly what a vote with the documented rules must
score on such samples: by enumerating every outcome sequence (right, or wrong value j),
and for each deciding the winner as the rules say (most votes; ties to the preferred
kind's plurality, then to the earliest vote), written here independently of the
package's vote.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tablereason.datasets import Example
from tablereason.llm import Request, ScriptedLLM
from tablereason.metrics import METRICS
from tablereason.table import Table

NUMBER_FORMS = ("{}", "{}.", "{}.0")
TEXT_FORMS = ("{}", "{}.", "{}")


@dataclass(frozen=True)
class Question:
    """One scripted question: its right value and its wrong ones, each in several forms."""

    id: str
    right: tuple[str, ...]
    wrong: tuple[tuple[str, ...], ...]


def _forms(value: str, number: bool) -> tuple[str, ...]:
    if number:
        return tuple(form.format(value) for form in NUMBER_FORMS)
    return (value, value.lower() + ".", value.upper())


def questions(n: int, wrong: int, *, seed: int = 0) -> list[Question]:
    """``n`` questions, half with number answers and half with text answers."""
    rng = random.Random(seed)
    out = []
    for index in range(n):
        number = index % 2 == 0
        values = rng.sample(range(1000, 9999), wrong + 1) if number else None
        if values is not None:
            texts = [str(v) for v in values]
        else:
            texts = [f"Town{rng.randrange(10**6)}x{j}" for j in range(wrong + 1)]
        out.append(Question(
            id=f"q{index}", right=_forms(texts[0], number),
            wrong=tuple(_forms(t, number) for t in texts[1:]),
        ))  # fmt: skip
    return out


def draw(question: Question, seed: int | None, kind: str, p: float) -> str:
    """The answer text one sample gives: right with probability ``p``, in a random form."""
    rng = random.Random(f"{question.id}|{seed}|{kind}")
    if rng.random() < p:
        return rng.choice(question.right)
    return rng.choice(rng.choice(question.wrong))


def table_of(question: Question) -> Table:
    """The question's table: every form of every value, one per row (SQL selects one)."""
    cells = [*question.right, *itertools.chain.from_iterable(question.wrong)]
    return Table.from_records(["value"], [[c] for c in dict.fromkeys(cells)])


def example_of(question: Question) -> Example:
    """The question as an example over its live table; the gold is its first right form."""
    return Example.from_table(
        table_of(question), f"which value is {question.id}?", answer=[question.right[0]],
        dataset="wikitq", id=question.id,
    )  # fmt: skip


def noisy_llm(asked: Sequence[Question], p: float, p_code: float | None = None) -> ScriptedLLM:
    """A model that answers Chain-of-Table's and Text-to-SQL's prompts noisily.

    A textual sample is right with probability ``p``, a symbolic (SQL) one with
    ``p_code`` (``p`` when None).
    """
    by_id = {q.id: q for q in asked}

    def reply(request: Request) -> str:
        text = request.as_text()
        question = by_id[re.search(r"which value is (q\d+)\?", text).group(1)]
        if request.call_site.startswith("baselines"):
            chance = p if p_code is None else p_code
            value = draw(question, request.seed, "sql", chance).replace("'", "''")
            return f' SELECT "value" FROM t WHERE "value" = \'{value}\';'
        if "f_" in text:
            return "<END>"
        return " " + draw(question, request.seed, "text", p)

    return ScriptedLLM(fn=reply)


def predicted_accuracy(
    p: float | Sequence[float], kinds: Sequence[str], wrong: int, prefer: str | None
) -> float:
    """The exact accuracy of the vote over ``len(kinds)`` samples (see the module notes).

    ``p`` is every sample's chance of being right, or each sample's.
    """
    n = len(kinds)
    chances = [p] * n if isinstance(p, float | int) else list(p)
    total = 0.0
    for outcome in itertools.product(range(wrong + 1), repeat=n):
        votes = [outcome.count(v) for v in range(wrong + 1)]
        top = [v for v in range(wrong + 1) if votes[v] == max(votes)]
        if len(top) > 1 and prefer is not None:
            preferred = [
                sum(1 for o, k in zip(outcome, kinds, strict=False) if o == v and k == prefer)
                for v in top
            ]
            top = [v for v, c in zip(top, preferred, strict=False) if c == max(preferred)]
        if min(top, key=outcome.index) != 0:
            continue
        chance = 1.0
        for o, right in zip(outcome, chances, strict=False):
            chance *= right if o == 0 else (1 - right) / wrong
        total += chance
    return total


def interval(accuracy: float, n: int, z: float = 1.96) -> float:
    """Half the width of the normal interval of an accuracy over ``n`` questions."""
    return z * math.sqrt(max(accuracy * (1 - accuracy), 1e-12) / n)


def score(prediction_answer: object, example: Example) -> float:
    """The WikiTQ official score of an answer."""
    return float(METRICS.get("wikitq_accuracy").score_example(prediction_answer, example))


def critic_llm(plant: dict[str, bool]) -> ScriptedLLM:
    """Chains select one row; a planted chain's first plan selects the wrong one.

    The judge says no when the answer is not the row's own name; the critic names the
    step where the chain went wrong (the select, or the answer read after it).
    """

    def reply(request: Request) -> str:
        text = request.as_text()
        question = text.split("city of ")[-1].split("?")[0]
        right_row = int(question[1:]) % 3 + 1
        if text.endswith("Verdict:"):
            return " yes" if f"Answer: c{right_row}" in text else " no"
        if text.endswith("First wrong step:"):
            return " 1"
        if ("f_" in text and "Function Chain" in text) or text.rstrip().endswith("->"):
            wrong = plant[question] and request.temperature == 0
            row = right_row % 3 + 1 if wrong else right_row
            return f"f_select_row(row {row}) -> <END>"
        if "f_" in text:
            return "<END>"
        rows = [line for line in text.splitlines() if line.startswith("row ")]
        return " " + (rows[-1].split(" : ")[1].split(" | ")[0] if rows else "")

    return ScriptedLLM(fn=reply)
