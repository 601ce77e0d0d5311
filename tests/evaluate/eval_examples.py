"""Synthetic TabFact-style examples shared by the evaluation tests."""

from __future__ import annotations

from tablereason.datasets import Example


def tabfact_examples(n: int) -> list[Example]:
    """``n`` examples ``ex0``, ``ex1``, ...; odd positions are true (``yes``)."""
    return [
        Example(
            dataset="tabfact",
            id=f"ex{i}",
            question=f"statement {i}",
            answer="yes" if i % 2 else "no",
            metadata={"label": i % 2},
        )
        for i in range(n)
    ]
