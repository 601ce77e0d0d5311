"""Watching the model a run talks to: an unreachable server fails fast, and failures are kept.

Methods never raise on a model failure: they record it in the trace and end with
``Prediction.error``. Whoever runs them (``tablereason ask``, an evaluation) still
needs to know *that the model failed*, to exit with the right code or to stop a run
whose server is gone. :class:`ServerWatch` wraps the bare backend, under the retry
layer, and keeps the outcome of the latest request (:attr:`ServerWatch.last_error`).

A connection refused (nothing listens at the address), an unknown host name or an
unreachable network is not a passing fault that backing off cures: the watch tries
again a bounded number of times at short intervals (a server that is just starting
gets its chance), then raises :class:`ServerUnreachableError`, which names the
address and is not retried. Timeouts, dropped connections and error replies pass
through untouched, for the retry layer to handle as before.

Example:
    >>> from tablereason.llm import Request, ScriptedLLM
    >>> down = ScriptedLLM(replies=[ConnectionRefusedError(111, "Connection refused")] * 3)
    >>> watch = ServerWatch(down, pause_s=0.0)
    >>> try:
    ...     watch.complete(Request(prompt="hi"))
    ... except ServerUnreachableError as error:
    ...     print(str(error).split(";")[0])
    the model server is unreachable (connection refused)
    >>> watch.down
    True
"""

from __future__ import annotations

import asyncio
import errno
import socket
import threading
import time
from collections.abc import Callable

from tablereason.errors import LLMError
from tablereason.llm.base import LLM, Completion, Request
from tablereason.llm.wrappers.base import LLMWrapper

OPENAI_URL = "https://api.openai.com/v1"
"""Where an OpenAI backend without a base URL sends its requests."""

_UNREACHABLE_ERRNOS = {
    errno.ECONNREFUSED: "connection refused",
    errno.EHOSTUNREACH: "no route to the host",
    errno.ENETUNREACH: "the network is unreachable",
    errno.EADDRNOTAVAIL: "the address is not available",
}


class ServerUnreachableError(LLMError):
    """The model server could not be reached at all; retrying at length would not help.

    Args:
        url: The server's address, or ``None`` when the backend does not say.
        reason: What the connection attempt met (``"connection refused"``).
        detail: What it led to, when there is more to say (a run that stopped).
    """

    def __init__(self, url: str | None, reason: str, *, detail: str | None = None) -> None:
        where = f"the server at {url}" if url else "the model server"
        said = f"; {detail}" if detail else ""
        super().__init__(
            f"{where} is unreachable ({reason}){said}; start it, or check the address "
            "(--base-url or OPENAI_BASE_URL)"
        )
        self.url = url
        self.reason = reason


def unreachable_reason(error: BaseException) -> str | None:
    """Why ``error`` means the server cannot be reached, or ``None`` when it does not.

    The whole chain of causes is read (HTTP clients wrap the socket's error twice or
    three times).

    Example:
        >>> unreachable_reason(ConnectionRefusedError(111, "Connection refused"))
        'connection refused'
        >>> unreachable_reason(TimeoutError("slow")) is None
        True
    """
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, socket.gaierror):
            return "the host name is unknown"
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, OSError) and current.errno in _UNREACHABLE_ERRNOS:
            return _UNREACHABLE_ERRNOS[current.errno]
        if isinstance(current, ServerUnreachableError):
            return current.reason
        pending += [current.__cause__, current.__context__]
    return None


def server_url(llm: LLM) -> str | None:
    """The address a backend sends its requests to, when it has one.

    Example:
        >>> from tablereason.llm import OpenAIChat, ScriptedLLM
        >>> server_url(OpenAIChat("m", base_url="http://127.0.0.1:9/v1"))
        'http://127.0.0.1:9/v1'
        >>> server_url(ScriptedLLM(replies=[])) is None
        True
    """
    url = getattr(llm, "base_url", None)
    if isinstance(url, str) and url:
        return url
    return OPENAI_URL if llm.name == "openai" else None


class ServerWatch(LLMWrapper):
    """Keeps the outcome of the latest request; an unreachable server fails fast.

    Args:
        inner: The bare backend (put the watch under the retry layer).
        attempts: Connection attempts before the server counts as unreachable.
        pause_s: Wait before the second attempt; it doubles for each further one.
        sleep: Blocking sleep between attempts (tests pass a fake).
    """

    def __init__(
        self,
        inner: LLM,
        *,
        attempts: int = 3,
        pause_s: float = 0.25,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(inner)
        self.url = server_url(inner)
        self.attempts = max(1, attempts)
        self.pause_s = pause_s
        self._sleep = sleep
        self._lock = threading.Lock()
        self.last_error: BaseException | None = None
        self.requests = 0
        self.failures = 0

    @property
    def down(self) -> bool:
        """Whether the latest request found the server unreachable."""
        return isinstance(self.last_error, ServerUnreachableError)

    def _outcome(self, error: BaseException | None) -> None:
        with self._lock:
            self.requests += 1
            self.failures += error is not None
            self.last_error = error

    def _after_failure(self, attempt: int, error: Exception) -> Exception | None:
        """What to raise after failed attempt ``attempt`` (0-based): ``None`` to try again.

        ``error`` itself when it is not about reaching the server; after the last
        attempt at an unreachable server, a :class:`ServerUnreachableError`.
        """
        reason = unreachable_reason(error)
        if reason is None:
            self._outcome(error)
            return error
        if attempt + 1 < self.attempts:
            return None
        unreachable = ServerUnreachableError(self.url, reason)
        self._outcome(unreachable)
        return unreachable

    def complete(self, request: Request) -> Completion:
        """Answer one request; an unreachable server raises :class:`ServerUnreachableError`."""
        attempt = 0
        while True:
            try:
                completion = self.inner.complete(request)
            except Exception as error:
                final = self._after_failure(attempt, error)
                if final is error:
                    raise
                if final is not None:
                    raise final from error
                self._sleep(self.pause_s * 2**attempt)
                attempt += 1
                continue
            self._outcome(None)
            return completion

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        attempt = 0
        while True:
            try:
                completion = await self.inner.acomplete(request)
            except Exception as error:
                final = self._after_failure(attempt, error)
                if final is error:
                    raise
                if final is not None:
                    raise final from error
                await asyncio.sleep(self.pause_s * 2**attempt)
                attempt += 1
                continue
            self._outcome(None)
            return completion
