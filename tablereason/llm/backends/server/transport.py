"""A lean JSON-over-HTTP client for OpenAI-compatible servers.

The ``openai`` package builds every request through several layers of option handling
and response models: about 2.5 ms of CPU per call on a small machine. Under the GIL
that caps a thread pool of 32 at roughly 75% of the throughput a 100 ms server allows.
Self-hosted servers (vLLM, llama.cpp's server, Ollama) need none of that: a POST of a
JSON body and a JSON reply. :class:`JSONTransport` does exactly that with the standard
library, keeping one keep-alive connection per thread, and reports failures with the
same error types as the ``openai`` path, so retries and accounting behave alike.

Choose it with ``transport="http"`` on :class:`~tablereason.llm.OpenAIChat` and
:class:`~tablereason.llm.OpenAICompletion` (``"auto"``, the default, uses it for a
``base_url`` that no proxy applies to).
"""

from __future__ import annotations

import http.client
import io
import json
import select
import socket
import threading
import urllib.parse
import urllib.request
from typing import Any

from tablereason.errors import ConfigurationError
from tablereason.llm.backends.server.deadline import DeadlineReader, deadline_after, time_left
from tablereason.llm.backends.server.replies import SeenReplies, decode
from tablereason.llm.backends.server.status import error_message, status_error
from tablereason.llm.errors import DuplicateReplyError, TransientLLMError


class JSONObject(dict[str, Any]):
    """A decoded JSON object whose keys also read as attributes (missing ones as None).

    Replies keep the shape of the ``openai`` package's response models, so one piece
    of code reads both.

    Example:
        >>> reply = json.loads('{"choices": [{"text": "hi"}]}', object_hook=JSONObject)
        >>> reply.choices[0].text, reply.usage
        ('hi', None)
    """

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


def proxied(url: str) -> bool:
    """Whether the environment routes ``url`` through a proxy (``HTTPS_PROXY`` and kin).

    Example:
        >>> proxied("http://127.0.0.1:8000/v1")
        False
    """
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies()
    if parts.scheme not in proxies:
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


class _SocketWithDeadline:
    """What ``http.client`` builds a response from: reads bounded by the deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(DeadlineReader(self._sock))


class _DeadlineResponse(http.client.HTTPResponse):
    """A response whose status line, headers and body are read before the deadline."""

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        wrapped: Any = _SocketWithDeadline(sock)
        super().__init__(wrapped, *args, **kwargs)


class _HTTPConnection(http.client.HTTPConnection):
    response_class = _DeadlineResponse


class _HTTPSConnection(http.client.HTTPSConnection):
    response_class = _DeadlineResponse


class JSONTransport:
    """POST JSON to an OpenAI-compatible server; one keep-alive connection per thread.

    A connection the server has closed while idle is noticed before reuse and
    replaced; every other failure closes the connection and raises
    :class:`TransientLLMError` (timeouts, resets, truncated or malformed replies), so
    a request is never sent twice behind the caller's back.

    ``timeout`` bounds the whole request (connecting, sending, the status line,
    headers and body together), not each read: a server that trickles bytes cannot
    hold a call longer. A reply the server delivers a second time on the same
    connection (same id, same bytes) raises :class:`DuplicateReplyError` and drops
    the connection instead of answering the next request.

    Args:
        base_url: The server's API root, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: Sent as a bearer token.
        timeout: Seconds allowed for one whole request.

    Example:
        >>> JSONTransport("http://127.0.0.1:8000/v1", api_key="x", timeout=5).root
        '/v1'
    """

    def __init__(self, base_url: str, *, api_key: str, timeout: float) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(
                f"base_url must be an http:// or https:// URL with a host, got {base_url!r}"
            )
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.root = parts.path.rstrip("/")
        self.timeout = timeout
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {api_key}",
            "User-Agent": "tablereason",
        }
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        """This thread's connection, connected within the deadline, ready to send."""
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.sock is not None and _dropped(conn.sock):
            conn.close()
        if conn is None:
            https = self.scheme == "https"
            factory = _HTTPSConnection if https else _HTTPConnection
            conn = factory(self.host, self.port, timeout=self.timeout)
            self._local.conn = conn
        if conn.sock is None:
            self._local.seen = SeenReplies()
            conn.timeout = _left()
            conn.connect()
            if conn.sock is not None:
                conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.sock.settimeout(_left())
        return conn

    def _discard(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """Send ``body`` to ``path`` (relative to the API root); the decoded reply.

        Args:
            path: Endpoint such as ``/chat/completions``.
            body: The JSON body.

        Returns:
            The reply, with objects as :class:`JSONObject`.

        Raises:
            TransientLLMError: Timeouts, connection failures, truncated replies,
                408/409/429/5xx statuses.
            MalformedReplyError: A body that is not JSON.
            DuplicateReplyError: A reply already received on this connection.
            ContextLengthError: The server said the prompt is too long.
            LLMError: Any other error status.
        """
        payload = self._round_trip("POST", path, json.dumps(body).encode())
        reply = decode(payload, object_hook=JSONObject)
        reply_id = reply.get("id") if isinstance(reply, dict) else None
        try:
            self._local.seen.check(reply_id if isinstance(reply_id, str) else None, payload)
        except DuplicateReplyError:
            self._discard()
            raise
        return reply

    def get(self, path: str) -> Any:
        """The decoded JSON reply of a GET of ``path`` (relative to the API root).

        Raises:
            The errors of :meth:`post`.
        """
        return decode(self._round_trip("GET", path, None), object_hook=JSONObject)

    def _round_trip(self, method: str, path: str, data: bytes | None) -> bytes:
        """One request within the deadline; the body of a reply with a status below 400."""
        try:
            with deadline_after(self.timeout):
                conn = self._connection()
                conn.request(method, self.root + path, body=data, headers=self._headers)
                response = conn.getresponse()
                payload = response.read()
        except TimeoutError as error:
            self._discard()
            raise TransientLLMError(f"no reply within the {self.timeout:g}s timeout") from error
        except (OSError, http.client.HTTPException) as error:
            self._discard()
            raise TransientLLMError(
                f"connection failed: {type(error).__name__}: {error}"
            ) from error
        if response.will_close:
            self._discard()
        if response.status >= 400:
            raise status_error(response.status, error_message(payload), response.headers)
        return payload


def _left() -> float:
    """Seconds left before the request's deadline; ``TimeoutError`` when none are."""
    left = time_left()
    if left is None:  # pragma: no cover - post() always sets a deadline
        raise RuntimeError("no request deadline set")
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left


def _dropped(sock: socket.socket) -> bool:
    """True when an idle keep-alive socket was closed (or sent junk) by the server."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
