"""Time limits for the package's own DuckDB queries: one thread that calls late callbacks.

:meth:`~tablereason.table.storage.Store.time_limit` registers a deadline with
:data:`WATCHDOG`; when a block outlasts it, the watchdog interrupts the store's query.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import duckdb


class Watchdog:
    """One daemon thread that calls callbacks whose deadline has passed.

    Cheaper than a timer thread per query: registering a deadline takes a lock
    and wakes the thread only when the new deadline is earlier than the one it
    sleeps until.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[int, tuple[float, Callable[[], None]]] = {}
        self._keys = itertools.count()
        self._thread: threading.Thread | None = None
        self._sleeping_until = float("inf")

    @contextmanager
    def watch(self, seconds: float, callback: Callable[[], None]) -> Iterator[None]:
        """Call ``callback`` (from the watchdog thread) if the block outlasts ``seconds``."""
        key = next(self._keys)
        deadline = time.monotonic() + seconds
        with self._cond:
            self._due[key] = (deadline, callback)
            if self._thread is None or not self._thread.is_alive():  # first use, or after fork
                self._thread = threading.Thread(
                    target=self._run, name="tablereason-time-limit", daemon=True
                )
                self._thread.start()
            elif deadline < self._sleeping_until:
                self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                self._due.pop(key, None)  # gone already if it fired

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for key, (deadline, callback) in list(self._due.items()):
                    if deadline <= now:
                        del self._due[key]
                        with contextlib.suppress(duckdb.Error):  # e.g. a closed connection
                            callback()
                self._sleeping_until = min((d for d, _ in self._due.values()), default=float("inf"))
                wait = self._sleeping_until - now
                self._cond.wait(None if wait == float("inf") else wait)


WATCHDOG = Watchdog()
"""The process's watchdog, shared by every store."""
