"""A concurrency limit shared by threads and asyncio tasks, and the wrapper that applies it."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM, Completion, Request
from tablereason.llm.wrappers.base import LLMWrapper


@dataclass(eq=False)
class _Waiter:
    event: threading.Event | None = None
    loop: asyncio.AbstractEventLoop | None = None
    future: asyncio.Future[None] | None = field(default=None)


class ConcurrencyLimit:
    """At most ``limit`` holders at once, across threads and event loops, first come first served.

    A thread blocks in :meth:`slot`; a coroutine awaits in :meth:`aslot` without
    blocking its event loop or using a worker thread. One instance shared by several
    wrappers (or several backends) gives them one common limit.

    Args:
        limit: Maximum number of concurrent holders (at least 1).

    Example:
        >>> lim = ConcurrencyLimit(2)
        >>> with lim.slot():
        ...     lim.in_use
        1
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ConfigurationError(f"a concurrency limit must be at least 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._free = limit
        self._waiters: deque[_Waiter] = deque()

    @property
    def in_use(self) -> int:
        """Number of slots currently held."""
        with self._lock:
            return self.limit - self._free

    def acquire(self) -> None:
        """Block the calling thread until a slot is free, then take it."""
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            waiter = _Waiter(event=threading.Event())
            self._waiters.append(waiter)
        assert waiter.event is not None
        waiter.event.wait()

    async def acquire_async(self) -> None:
        """Wait (without blocking the event loop) until a slot is free, then take it."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            waiter = _Waiter(loop=loop, future=loop.create_future())
            self._waiters.append(waiter)
        assert waiter.future is not None
        try:
            await waiter.future
        except asyncio.CancelledError:
            with self._lock:
                if waiter in self._waiters:  # never granted: just leave the queue
                    self._waiters.remove(waiter)
                    raise
            if waiter.future.done() and not waiter.future.cancelled():
                self.release()  # granted just before the cancellation landed
            raise  # a cancelled future hands its slot on in _grant

    def release(self) -> None:
        """Give a slot back, handing it directly to the longest waiter if there is one."""
        with self._lock:
            if not self._waiters:
                if self._free >= self.limit:
                    raise RuntimeError("ConcurrencyLimit released more often than acquired")
                self._free += 1
                return
            waiter = self._waiters.popleft()
        if waiter.event is not None:
            waiter.event.set()
        else:
            assert waiter.loop is not None and waiter.future is not None
            try:
                waiter.loop.call_soon_threadsafe(self._grant, waiter.future)
            except RuntimeError:  # that event loop is closed: pass the slot on
                self.release()

    def _grant(self, future: asyncio.Future[None]) -> None:
        if future.cancelled():
            self.release()
        else:
            future.set_result(None)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one slot for the duration of a ``with`` block (threads)."""
        self.acquire()
        try:
            yield
        finally:
            self.release()

    @asynccontextmanager
    async def aslot(self) -> AsyncIterator[None]:
        """Hold one slot for the duration of an ``async with`` block (coroutines)."""
        await self.acquire_async()
        try:
            yield
        finally:
            self.release()


class LimitedLLM(LLMWrapper):
    """Runs at most ``limit.limit`` requests of the wrapped model at once.

    Args:
        inner: The model to wrap.
        limit: A :class:`ConcurrencyLimit` (share one instance to share the limit) or an int.

    Example:
        >>> from tablereason.llm.backends.scripted import ScriptedLLM
        >>> llm = LimitedLLM(ScriptedLLM(replies=["ok"]), 4)
        >>> llm.complete(Request(prompt="hi")).text
        'ok'
    """

    def __init__(self, inner: LLM, limit: ConcurrencyLimit | int) -> None:
        super().__init__(inner)
        self.limit = limit if isinstance(limit, ConcurrencyLimit) else ConcurrencyLimit(limit)

    def complete(self, request: Request) -> Completion:
        """Answer one request once a slot is free."""
        with self.limit.slot():
            return self.inner.complete(request)

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        async with self.limit.aslot():
            return await self.inner.acomplete(request)
