"""Independent references for the grammar tests: a matcher and a sampler over the GBNF tree.

The matcher computes, for an expression and a start position, every position where a
match can end (memoised, straight from the definitions; no stacks, no compilation), so
it shares no code with the recognizer it checks. The sampler draws texts a grammar
generates, bounded in depth.
"""

from __future__ import annotations

import functools
import random

from tablereason.llm.constraints.gbnf import Alt, Chars, Expr, Lit, Ref, Repeat, Rules, Seq


def ends(rules: Rules, text: str) -> set[int]:
    """Every position at which a match of ``root`` that starts at 0 can end."""

    @functools.cache
    def match(expr: Expr, start: int) -> frozenset[int]:
        if isinstance(expr, Lit):
            stop = start + len(expr.text)
            return frozenset({stop}) if text.startswith(expr.text, start) else frozenset()
        if isinstance(expr, Chars):
            ok = start < len(text) and expr.matches(text[start])
            return frozenset({start + 1}) if ok else frozenset()
        if isinstance(expr, Ref):
            return match(rules[expr.name], start)
        if isinstance(expr, Seq):
            positions = frozenset({start})
            for item in expr.items:
                positions = frozenset(e for p in positions for e in match(item, p))
            return positions
        if isinstance(expr, Alt):
            return frozenset(e for o in expr.options for e in match(o, start))
        assert isinstance(expr, Repeat)
        reached, frontier, count = set(), {start}, 0
        if expr.low == 0:
            reached.add(start)
        while frontier and (expr.high is None or count < expr.high):
            count += 1
            frontier = {e for p in frontier for e in match(expr.item, p)} - (
                reached if expr.high is None else set()
            )
            if count >= expr.low:
                reached |= frontier
        return frozenset(reached)

    return set(match(rules["root"], 0))


def accepts(rules: Rules, text: str) -> bool:
    """Whether the whole of ``text`` matches (the reference answer)."""
    return len(text) in ends(rules, text)


def sample(rules: Rules, rng: random.Random, depth: int = 12) -> str | None:
    """A text the grammar generates (None when the depth bound is hit)."""

    def draw(expr: Expr, left: int) -> str | None:
        if left < 0:
            return None
        if isinstance(expr, Lit):
            return expr.text
        if isinstance(expr, Chars):
            if expr.negated:
                banned = {c for lo, hi in expr.ranges for c in range(lo, hi + 1) if hi - lo < 5000}
                pool = [c for c in range(32, 127) if c not in banned] + [0xE9, 0x4E2D]
                return chr(rng.choice(pool))
            lo, hi = rng.choice(expr.ranges)
            return chr(rng.randint(lo, hi))
        if isinstance(expr, Ref):
            return draw(rules[expr.name], left - 1)
        if isinstance(expr, Seq):
            parts = [draw(i, left) for i in expr.items]
            return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
        if isinstance(expr, Alt):
            for option in rng.sample(list(expr.options), len(expr.options)):
                got = draw(option, left - 1)
                if got is not None:
                    return got
            return None
        assert isinstance(expr, Repeat)
        high = expr.high if expr.high is not None else expr.low + 3
        times = rng.randint(expr.low, high)
        parts = [draw(expr.item, left - 1) for _ in range(times)]
        return None if any(p is None for p in parts) else "".join(p or "" for p in parts)

    return draw(rules["root"], depth)
