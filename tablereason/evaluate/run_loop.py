"""The loop that collects a run's examples as they finish: interrupts and a vanished server.

:func:`collect` waits for the examples' futures and hands each finished record to the
run (which writes it). Two things end it early:

- **Ctrl-C** (or the ``stop`` event, set by a parent that runs shards on threads):
  examples not yet started are cancelled; those already running are allowed to finish
  and their results are kept, after a line on stderr that says how many and that a
  second Ctrl-C stops at once. A second Ctrl-C does: :class:`Interrupted` is raised
  with the number of examples abandoned (they run again on the next run).
- **An unreachable server**: when ``max_connection_failures`` examples in a row fail
  while the model's :class:`~tablereason.evaluate.server_watch.ServerWatch` finds the
  server unreachable, the rest are cancelled, the running ones finish, and
  :class:`~tablereason.evaluate.server_watch.ServerUnreachableError` ends the run.
  Such failures are never written: they say nothing about the method, and a rerun
  runs those examples again.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, as_completed, wait
from typing import Any

from tablereason.evaluate.server_watch import ServerUnreachableError, ServerWatch

Record = dict[str, Any]
POLL_S = 0.2
"""How often the loop looks at its stop event while waiting for examples."""


class Interrupted(KeyboardInterrupt):
    """A run was interrupted (Ctrl-C); ``abandoned`` examples were still running.

    With ``abandoned == 0`` every example that had started finished and was written.
    Otherwise the run stopped at once: those examples' threads may still be working,
    and a command line should exit without waiting for them (their results are lost
    and the examples run again on the next run; the result file is always intact).
    """

    def __init__(self, abandoned: int = 0) -> None:
        super().__init__(abandoned)
        self.abandoned = abandoned


def _say(message: str) -> None:
    sys.stderr.write(f"\ntablereason: {message}\n")
    sys.stderr.flush()


class Collector:
    """Hands finished records on, and counts examples that could not reach the server.

    Args:
        keep: Writes (and counts) one record.
        server: The watch on the run's model, when the run has one.
        max_connection_failures: Examples in a row that may fail with the server
            unreachable before the run stops (0: never stop).
    """

    def __init__(
        self,
        keep: Callable[[Record], None],
        server: ServerWatch | None,
        max_connection_failures: int,
    ) -> None:
        self.keep = keep
        self.server = server
        self.limit = max_connection_failures
        self.streak = 0
        self.unreachable = 0
        self.stopped_after = 0  # the streak that stopped the run

    def take(self, record: Record) -> bool:
        """Keep one record, or hold back a failure of an unreachable server; True to stop."""
        if record.get("error") and self.server is not None and self.server.down:
            self.streak += 1
            self.unreachable += 1
            if self.limit and self.streak >= self.limit:
                self.stopped_after = self.stopped_after or self.streak
                return True
            return False
        self.streak = 0
        self.keep(record)
        return False


def _finish_running(
    futures: Iterable[Future[Record]], collector: Collector, announce: Callable[[int], str]
) -> None:
    """Cancel what has not started; let the running examples finish and keep them."""
    left = list(futures)
    for future in left:
        future.cancel()
    running = [f for f in left if not f.cancelled()]  # running, or done and not yet taken
    busy = sum(1 for f in running if not f.done())
    if busy:
        _say(announce(busy))
    try:
        for future in as_completed(running):
            collector.take(future.result())
    except KeyboardInterrupt:
        raise Interrupted(sum(1 for f in running if not f.done())) from None


def collect(
    futures: list[Future[Record]],
    collector: Collector,
    *,
    stop: threading.Event | None = None,
) -> None:
    """Wait for every future, handing each record to ``collector`` as it finishes.

    Finished futures arrive through a queue (each one's done-callback puts it there),
    so each costs the same however many are pending; the loop looks at ``stop`` every
    :data:`POLL_S` while it waits.

    Raises:
        Interrupted: After Ctrl-C or ``stop``; see the module notes.
        ServerUnreachableError: When the server stayed unreachable for
            ``max_connection_failures`` examples in a row.
    """
    stop = stop or threading.Event()
    finished: queue.SimpleQueue[Future[Record]] = queue.SimpleQueue()
    for future in futures:
        future.add_done_callback(finished.put)
    taken: set[Future[Record]] = set()
    stopped_by_server = False
    try:
        while len(taken) < len(futures) and not stop.is_set() and not stopped_by_server:
            try:
                future = finished.get(timeout=POLL_S)
            except queue.Empty:
                continue
            taken.add(future)
            stopped_by_server = collector.take(future.result())
    except KeyboardInterrupt:
        stop.set()
    left = [f for f in futures if f not in taken]  # running, queued, or done and not taken
    if stopped_by_server:
        _finish_running(
            left,
            collector,
            lambda n: (
                f"the model server is unreachable: stopping; {n} running example"
                f"{'s' if n != 1 else ''} finishing (Ctrl-C stops at once)"
            ),
        )
        raise _stopped(collector)
    if stop.is_set():
        _finish_running(
            left,
            collector,
            lambda n: (
                f"interrupted: {n} example{'s are' if n != 1 else ' is'} finishing "
                "(their results are kept); press Ctrl-C again to stop at once"
            ),
        )
        raise Interrupted(0)


def _stopped(collector: Collector) -> ServerUnreachableError:
    last = collector.server.last_error if collector.server is not None else None
    url = last.url if isinstance(last, ServerUnreachableError) else None
    reason = last.reason if isinstance(last, ServerUnreachableError) else "connection failed"
    return ServerUnreachableError(
        url,
        reason,
        detail=f"the run stopped after {collector.stopped_after} examples in a row could not "
        f"reach it ({collector.unreachable} in all, not recorded: they run again when the "
        "same command is rerun)",
    )


def wait_for_shards(futures: list[Future[Any]], stop: threading.Event) -> list[Any]:
    """Every shard task's result; on Ctrl-C, ``stop`` is set and the shards finish first.

    Shards that run on threads share ``stop`` and finish their running examples (the
    loop above); a second Ctrl-C stops at once.

    Raises:
        Interrupted: After Ctrl-C, with the shards still running when it was given up.
    """
    try:
        return [future.result() for future in futures]
    except KeyboardInterrupt:
        stop.set()
    try:
        wait(futures)
    except KeyboardInterrupt:
        raise Interrupted(sum(1 for f in futures if not f.done())) from None
    raise Interrupted(0)
