"""A whole-request deadline for HTTP calls: connect, send and every read share one budget.

Socket timeouts apply to each read: a server that sends a byte now and then (headers
or body) keeps a call alive for as long as it likes. Here the calling thread sets a
deadline (:func:`deadline_after`), and every network operation of the request gets
the time left as its timeout and fails once none is left.

Two clients use it:

* the lean transport's connections (:mod:`~tablereason.llm.backends.server.transport`) connect
  and send with the time left and read through :class:`DeadlineReader`;
* the ``openai`` package's HTTP client gets a network backend that wraps each
  connection (:func:`enforce_deadlines`); its sync calls run in the calling thread,
  so the thread's deadline is the request's.
"""

from __future__ import annotations

import importlib
import io
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

_local = threading.local()


@contextmanager
def deadline_after(seconds: float | None) -> Iterator[None]:
    """Within the block, this thread's network operations must end ``seconds`` from now.

    Args:
        seconds: The budget; ``None`` sets no deadline.

    Example:
        >>> with deadline_after(5.0):
        ...     0 < time_left() <= 5.0
        True
        >>> time_left() is None
        True
    """
    previous = getattr(_local, "deadline", None)
    _local.deadline = None if seconds is None else time.monotonic() + seconds
    try:
        yield
    finally:
        _local.deadline = previous


def time_left() -> float | None:
    """Seconds left before this thread's deadline (``None``: none set; may be negative)."""
    deadline: float | None = getattr(_local, "deadline", None)
    return None if deadline is None else deadline - time.monotonic()


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left; raises ``error`` when none is left."""
    left = time_left()
    if left is None:
        return timeout
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class DeadlineReader(io.RawIOBase):
    """Reads a socket; each read may wait only for the time left before the deadline.

    ``http.client`` reads a response's status line, headers and body through one of
    these (see :class:`~tablereason.llm.backends.server.transport.JSONTransport`). Without a
    deadline set, reads wait as long as the socket's own timeout allows.

    Args:
        sock: The connected socket.
    """

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock

    def readable(self) -> bool:
        """Always true: this is a reader."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Read into ``buffer``; ``TimeoutError`` once the deadline has passed."""
        left = _bounded(None, TimeoutError)
        if left is not None:
            self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


class _DeadlineStream:
    """One connection of the ``openai`` package's HTTP client, bounded by the deadline."""

    def __init__(self, inner: Any, errors: _Errors) -> None:
        self._inner = inner
        self._errors = errors

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._inner.read(max_bytes, _bounded(timeout, self._errors.read))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, self._errors.write))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> _DeadlineStream:  # fmt: skip
        bounded = _bounded(timeout, self._errors.connect)
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, bounded), self._errors
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Errors:
    """The timeout exceptions of the HTTP core library in use (httpcore or a fork)."""

    def __init__(self, backend: Any) -> None:
        core = importlib.import_module(type(backend).__module__.split(".")[0])
        self.connect: type[Exception] = getattr(core, "ConnectTimeout", TimeoutError)
        self.read: type[Exception] = getattr(core, "ReadTimeout", TimeoutError)
        self.write: type[Exception] = getattr(core, "WriteTimeout", TimeoutError)


class _DeadlineBackend:
    """A network backend whose connections honour the calling thread's deadline."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._errors = _Errors(inner)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> _DeadlineStream:  # fmt: skip
        bounded = _bounded(timeout, self._errors.connect)
        stream = self._inner.connect_tcp(
            host, port, timeout=bounded, local_address=local_address,
            socket_options=socket_options,
        )  # fmt: skip
        return _DeadlineStream(stream, self._errors)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> _DeadlineStream:  # fmt: skip
        bounded = _bounded(timeout, self._errors.connect)
        stream = self._inner.connect_unix_socket(path, bounded, socket_options)
        return _DeadlineStream(stream, self._errors)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def enforce_deadlines(http_client: Any) -> bool:
    """Make every connection pool of an ``httpx``-style client honour :func:`deadline_after`.

    The pools (the client's own and one per proxy it mounts) get a network backend
    that bounds each connect, read and write by the calling thread's deadline. The
    pools are reached through attributes that ``httpx`` does not document; when they
    are not found, nothing changes, a debug message says so and False is returned
    (each read is then bounded by the timeout, not the whole request).

    Args:
        http_client: An ``httpx.Client`` (or the same class of a fork), before use.

    Returns:
        Whether every pool was changed.
    """
    transports = [getattr(http_client, "_transport", None)]
    transports += list((getattr(http_client, "_mounts", None) or {}).values())
    done = True
    for transport in transports:
        if transport is None:
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None or not hasattr(backend, "connect_tcp"):
            done = False
            continue
        if not isinstance(backend, _DeadlineBackend):
            pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
    if not done:
        log.debug("%s: request deadlines not enforced on every pool", type(http_client))
    return done
