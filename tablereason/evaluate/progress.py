"""A one-line live progress report for evaluation runs (stderr, no dependencies)."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class ProgressLine:
    """Done count, accuracy so far, tokens, cost, rate and ETA, redrawn in place.

    Args:
        total: Examples this run will process (excluding ones resumed from the file).
        stream: Where to write; ``sys.stderr`` by default.
        min_interval_s: Redraw at most this often (the last update always draws).
        show_cost: Show the dollar cost so far.

    Example:
        >>> import io
        >>> p = ProgressLine(2, stream=io.StringIO(), min_interval_s=0)
        >>> p.update(score=1.0, tokens=10)
        >>> "1/2" in p.render()
        True
    """

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        min_interval_s: float = 0.2,
        show_cost: bool = False,
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.min_interval_s = min_interval_s
        self.done = 0
        self.failed = 0
        self.scored = 0
        self.score_sum = 0.0
        self.tokens = 0
        self.cost = 0.0
        self.show_cost = show_cost
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._lock = threading.Lock()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(
        self,
        *,
        score: float | None = None,
        tokens: int = 0,
        failed: bool = False,
        cost: float = 0.0,
    ) -> None:
        """Count one finished example and redraw when due."""
        with self._lock:
            self.done += 1
            self.cost += cost
            self.failed += failed
            self.tokens += tokens
            if score is not None:
                self.scored += 1
                self.score_sum += score
            now = time.monotonic()
            if self.done == self.total or now - self._last_draw >= self.min_interval_s:
                self._last_draw = now
                end = "\n" if self.done == self.total else ""
                if self._tty:
                    self.stream.write("\r" + self.render() + end)
                elif self.done == self.total or self.done % max(1, self.total // 20) == 0:
                    self.stream.write(self.render() + "\n")
                self.stream.flush()

    def render(self) -> str:
        """The progress text."""
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        accuracy = f"{100 * self.score_sum / self.scored:5.1f}%" if self.scored else "  n/a"
        cost = f" | ${self.cost:,.4f}" if self.show_cost else ""
        return (
            f"[{self.done}/{self.total}] acc {accuracy} | failed {self.failed} | "
            f"tokens {self.tokens:,}{cost} | {rate:.2f} ex/s | ETA {_duration(left)}"
        )
