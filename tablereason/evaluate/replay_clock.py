"""The time an example took when its answers were recorded, even when they are replayed.

A rerun answers from the response cache the requests an earlier run already sent (an
example that was running when that run was stopped, or a run whose result file was
removed): a replayed example takes milliseconds, and a report's time per example
would shrink with every resume. :class:`ReplayClock` wraps a run's model, above the
cache, and charges each cache hit to the example being run (a context variable set
by :func:`timing`): the live time it took to replay, and the latency recorded with the
answer. :meth:`ExampleTime.duration` then gives the example's time as if every
answer had come from the model again.

Requests made from threads that a method starts itself do not see the example's
context; they are timed as they happen (a replay counts its live time).

Example:
    >>> import time
    >>> with timing() as clock:
    ...     time.sleep(0.01)
    >>> clock.hits, 0.005 < clock.duration() < 1.0
    (0, True)
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tablereason.llm.base import Completion, Request
from tablereason.llm.wrappers.base import LLMWrapper

_CURRENT: contextvars.ContextVar[ExampleTime | None] = contextvars.ContextVar(
    "tablereason_example_time", default=None
)


class ExampleTime:
    """One example's wall time, with the replayed answers' live and recorded times."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.ended: float | None = None
        self.hits = 0
        self.replay_s = 0.0
        self.recorded_s = 0.0
        self._lock = threading.Lock()

    def replayed(self, live_s: float, recorded_s: float) -> None:
        """Count one answer that came from the cache."""
        with self._lock:
            self.hits += 1
            self.replay_s += live_s
            self.recorded_s += recorded_s

    def wall(self) -> float:
        """Seconds from the start to the end (or to now, while running)."""
        end = self.ended if self.ended is not None else time.perf_counter()
        return max(0.0, end - self.started)

    def duration(self) -> float:
        """The example's time with every replayed answer taking its recorded latency."""
        with self._lock:
            return max(0.0, self.wall() - self.replay_s + self.recorded_s)


@contextmanager
def timing() -> Iterator[ExampleTime]:
    """Time the block as one example; cache hits inside it are charged to it."""
    clock = ExampleTime()
    token = _CURRENT.set(clock)
    try:
        yield clock
    finally:
        clock.ended = time.perf_counter()
        _CURRENT.reset(token)


class ReplayClock(LLMWrapper):
    """Charges each replayed answer to the example being timed (see :func:`timing`).

    Wrap the run's whole model (the cache included) with it.
    """

    def _charge(self, completion: Completion, started: float) -> Completion:
        clock = _CURRENT.get()
        if completion.cached and clock is not None:
            clock.replayed(time.perf_counter() - started, completion.latency_s)
        return completion

    def complete(self, request: Request) -> Completion:
        """Answer one request; a cache hit is charged to the current example."""
        started = time.perf_counter()
        return self._charge(self.inner.complete(request), started)

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        started = time.perf_counter()
        return self._charge(await self.inner.acomplete(request), started)
