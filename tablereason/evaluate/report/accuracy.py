"""Accuracy with its 95% interval, and what one correct answer cost, for every run.

The interval is Wilson's score interval for a proportion (correct of the examples asked
for): it stays inside [0, 1] and is honest for the small runs a local model allows,
where the normal approximation is not. What a correct answer cost is the run's totals
divided by its correct answers: requests, tokens, seconds and dollars.

Example:
    >>> low, high = wilson(30, 50)
    >>> round(low, 3), round(high, 3)
    (0.462, 0.724)
    >>> wilson(0, 0)
    (0.0, 1.0)
    >>> per_correct_text(correct=4, requests=100, tokens=52_000, seconds=80.0, cost=0.0)
    'per correct answer: 25.0 requests, 13,000 tokens, 20.00 s, $0.0000'
"""

from __future__ import annotations

import math

Z_95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


def wilson(correct: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval of ``correct`` successes in ``n`` trials (default: 95%)."""
    if n <= 0:
        return 0.0, 1.0
    share = min(max(correct / n, 0.0), 1.0)
    centre = share + z * z / (2 * n)
    spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    low, high = (centre - spread) / scale, (centre + spread) / scale
    # rounding must not leave the interval without its own share (0 of n, n of n)
    return max(0.0, min(low, share)), min(1.0, max(high, share))


def per_correct_text(
    *, correct: float, requests: int, tokens: int, seconds: float, cost: float
) -> str:
    """One line: the run's requests, tokens, seconds and cost divided by its correct answers."""
    if correct <= 0:
        return "per correct answer: no correct answer"
    return (
        f"per correct answer: {requests / correct:.1f} requests, {tokens / correct:,.0f} tokens, "
        f"{seconds / correct:.2f} s, ${cost / correct:.4f}"
    )
