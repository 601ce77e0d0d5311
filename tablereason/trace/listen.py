"""Following a run's steps as they complete: the listener a :class:`Trace` reports to.

:func:`following` sets a :class:`StepFeed` in a context variable for the block it
wraps. The first :class:`~tablereason.trace.Trace` created in that context (the
method's own trace; traces that tools and nested methods make later are not followed)
binds itself to the feed, and from then on every step added to it is reported once,
in order, when it is complete:

- a step timed with :meth:`~tablereason.trace.TraceStep.start` when it is stopped;
- any other step when the next step is added (the method has moved on);
- whatever is left when the block ends (the run is over).

Because the trace keeps the feed it was created with, steps that a method adds from
threads it starts itself reach the feed too; asyncio tasks inherit the context variable
and so see the same feed. ``on_start`` hears of each timed step as it starts, which is
what a live display needs to say what the model is working on.

Example:
    >>> from tablereason.trace import Trace, TraceStep
    >>> seen = []
    >>> with following(lambda step: seen.append(step.name)):
    ...     trace = Trace(question="q")
    ...     _ = trace.add(TraceStep(kind="input", name="table"))
    ...     seen.append("-")
    ...     step = trace.add(TraceStep(kind="plan", name="plan")).start()
    ...     _ = step.stop()
    >>> seen
    ['-', 'table', 'plan']
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.trace.record import Trace, TraceStep

StepCallback = Callable[["TraceStep"], None]
"""Called with a step of the followed trace."""

_FEED: contextvars.ContextVar[StepFeed | None] = contextvars.ContextVar(
    "tablereason_step_feed", default=None
)


class StepFeed:
    """Reports the steps of one trace, each once and in order, as they complete.

    Args:
        on_step: Called with each complete step.
        on_start: Called with each timed step when it starts.

    Callbacks run in the thread that completed the step, one at a time; an exception
    they raise reaches the method, as any error of its own code would.
    """

    def __init__(self, on_step: StepCallback | None, on_start: StepCallback | None = None) -> None:
        self.on_step = on_step
        self.on_start = on_start
        self.trace: Trace | None = None
        self.reported = 0
        self._lock = threading.RLock()
        self._closed = False

    def claim(self, trace: Trace) -> bool:
        """Bind ``trace`` to this feed, when no trace is bound yet; whether it was bound."""
        with self._lock:
            if self.trace is not None or self._closed:
                return False
            self.trace = trace
            return True

    def started(self, step: TraceStep) -> None:
        """A timed step of the followed trace started."""
        if self.on_start is not None and not self._closed:
            with self._lock:
                self.on_start(step)

    def settle(self, *, final: bool = False) -> None:
        """Report every step that is complete now (``final``: the run is over, report all)."""
        with self._lock:
            trace = self.trace
            if trace is None or self._closed:
                return
            steps = trace.steps
            while self.reported < len(steps):
                step = steps[self.reported]
                last = self.reported == len(steps) - 1
                if not final and (step.running or (last and not step.timed)):
                    break
                self.reported += 1
                if self.on_step is not None:
                    self.on_step(step)

    def close(self) -> None:
        """The run is over: report what is left; nothing is reported after this."""
        with self._lock:
            if self._closed:
                return
            try:
                self.settle(final=True)
            finally:
                self._closed = True


def current_feed() -> StepFeed | None:
    """The feed of the :func:`following` block this code runs in, if any.

    Example:
        >>> with following(None) as feed:
        ...     current_feed() is feed
        True
        >>> current_feed() is None
        True
    """
    return _FEED.get()


@contextmanager
def following(
    on_step: StepCallback | None, *, on_start: StepCallback | None = None
) -> Iterator[StepFeed]:
    """Report the steps of the trace the wrapped code creates first, as they complete.

    Args:
        on_step: Called with each complete step (see the module notes for when).
        on_start: Called with each timed step when it starts.

    Yields:
        The :class:`StepFeed`; its ``trace`` is the followed trace once one exists.
    """
    feed = StepFeed(on_step, on_start)
    token = _FEED.set(feed)
    try:
        yield feed
    finally:
        _FEED.reset(token)
        feed.close()
