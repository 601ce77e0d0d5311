"""The embedded model's contexts: one per worker, loaded when needed, within a memory budget.

A llama.cpp context answers one request at a time. With ``workers > 1`` the embedded
model keeps up to that many, each a model of its own (``llama_cpp.Llama``; the GGUF file
is mapped, so its pages are shared between them, and each costs its attention cache and
compute buffers: about 220 MB at ``n_ctx=8192`` for Gemma 3 270M). A request takes an idle
context, or loads a new one when all are busy and both limits allow it, or waits. The
memory one context takes is measured on the first (the anonymous memory its loading
added, on Linux; its first request adds about a tenth more): no further context is loaded
when one more would take the contexts past ``memory_budget_bytes``. Contexts load one at
a time. All contexts of one model share its prefix store.

Example:
    >>> pool = ContextPool(lambda: object(), workers=2)
    >>> with pool.context() as first:
    ...     with pool.context() as second:
    ...         first is not second
    True
    >>> pool.loaded
    2
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEFAULT_MEMORY_MB = 1024
"""The contexts' memory beyond the shared model file, in MB, unless told otherwise."""


def anonymous_memory() -> int | None:
    """Bytes of anonymous memory this process holds (Linux), else None.

    Example:
        >>> anonymous_memory() is None or anonymous_memory() > 0
        True
    """
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(r"RssAnon:\s+(\d+) kB", status)
    return int(found.group(1)) * 1024 if found else None


class ContextPool:
    """Up to ``workers`` contexts made by ``load``, handed out one request at a time.

    Args:
        load: Makes one more context.
        workers: The most contexts kept.
        memory_budget_bytes: The most memory the contexts may take together (None: no
            limit but ``workers``).
        cap: A further limit, read each time another context might load (the embedded
            model gives its threads: a context without a thread of its own only takes
            turns with the others).
    """

    def __init__(
        self,
        load: Callable[[], Any],
        *,
        workers: int = 1,
        memory_budget_bytes: int | None = None,
        cap: Callable[[], int] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self._load = load
        self.workers = workers
        self.memory_budget_bytes = memory_budget_bytes
        self._cap = cap
        self.context_bytes: int | None = None
        """Memory the first context took (measured), once known."""
        self._all: list[Any] = []
        self._idle: list[Any] = []
        self._loading = False
        self._cond = threading.Condition()

    @property
    def loaded(self) -> int:
        """Contexts loaded so far."""
        with self._cond:
            return len(self._all)

    @property
    def busy(self) -> int:
        """Contexts answering a request now."""
        with self._cond:
            return len(self._all) - len(self._idle)

    def contexts(self) -> list[Any]:
        """Every context loaded so far."""
        with self._cond:
            return list(self._all)

    def allowed(self) -> int:
        """How many contexts the limits allow (at least one).

        Example:
            >>> pool = ContextPool(object, workers=4, memory_budget_bytes=500)
            >>> pool.context_bytes = 200
            >>> pool.allowed()
            2
            >>> ContextPool(object, workers=4, cap=lambda: 3).allowed()
            3
        """
        cap = self.workers
        if self.memory_budget_bytes is not None and self.context_bytes:
            cap = min(cap, self.memory_budget_bytes // self.context_bytes)
        if self._cap is not None:
            cap = min(cap, self._cap())
        return max(1, cap)

    def first(self) -> Any:
        """The first context, loaded if need be (for what every context shares)."""
        with self.context() as ctx:
            return ctx

    @contextmanager
    def context(self) -> Iterator[Any]:
        """An idle context for one request (loading or waiting for one if need be)."""
        ctx = self._acquire()
        try:
            yield ctx
        finally:
            self._release(ctx)

    def _acquire(self) -> Any:
        with self._cond:
            while not self._idle:
                if len(self._all) < self.allowed() and not self._loading:
                    self._loading = True
                    break
                self._cond.wait()
            else:
                return self._idle.pop()
            measure = not self._all
        before = anonymous_memory() if measure else None
        try:
            ctx = self._load()
        except BaseException:
            with self._cond:
                self._loading = False
                self._cond.notify_all()
            raise
        after = anonymous_memory() if measure else None
        with self._cond:
            self._loading = False
            self._all.append(ctx)
            if before is not None and after is not None:
                self.context_bytes = max(1, after - before)
            self._cond.notify_all()
        return ctx

    def _release(self, ctx: Any) -> None:
        with self._cond:
            self._idle.append(ctx)
            self._cond.notify_all()
