"""The ``openai`` package as a transport: its client, its errors mapped to ours, its replies.

The package is imported on first use. Its client gets a network backend that applies
the calling thread's whole-request deadline (:mod:`.deadline`) and its own retries are
off (``max_retries=0``: :class:`~tablereason.llm.wrappers.retry.RetryingLLM` is the one
retry policy). :class:`PackageReplies` reads raw responses, refusing one already seen
on the same connection (and closing that connection, so the pool opens a fresh one).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from tablereason.errors import MissingDependencyError, TableReasonError
from tablereason.llm.backends.server.deadline import enforce_deadlines
from tablereason.llm.backends.server.replies import SeenReplies, decode
from tablereason.llm.backends.server.status import error_message, status_error
from tablereason.llm.errors import DuplicateReplyError, MalformedReplyError, TransientLLMError


def openai_package() -> Any:
    """The ``openai`` module.

    Raises:
        MissingDependencyError: It is not installed.
    """
    try:
        import openai
    except ImportError as error:  # pragma: no cover - openai is a core dependency
        raise MissingDependencyError(
            "the OpenAI backend needs the `openai` package: pip install 'openai>=1.30'"
        ) from error
    return openai


def new_client(*, api_key: str, base_url: str | None, timeout: float) -> Any:
    """An ``openai.OpenAI`` client whose connections honour the whole-request deadline."""
    openai = openai_package()
    http_client = openai.DefaultHttpxClient()
    enforce_deadlines(http_client)
    return openai.OpenAI(
        api_key=api_key,
        base_url=base_url,
        timeout=timeout,
        max_retries=0,
        http_client=http_client,
    )


def translate_error(error: Exception, *, timeout: float) -> Exception:
    """Map an exception from the ``openai`` client to this package's error types."""
    if isinstance(error, TableReasonError):
        return error
    openai = openai_package()
    if isinstance(error, openai.APITimeoutError):
        return TransientLLMError(f"no reply within the {timeout:g}s timeout")
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error
        return TransientLLMError(f"connection failed: {type(cause).__name__}: {cause}")
    if isinstance(error, openai.APIStatusError):
        response = error.response
        if response is None:  # pragma: no cover - the package always attaches it
            return status_error(error.status_code, str(error.message), None)
        # the body as the lean transport reads it, so both report the server's words
        return status_error(error.status_code, error_message(response.content), response.headers)
    if isinstance(error, (openai.APIResponseValidationError, ValueError)):
        return MalformedReplyError(f"malformed reply from the server: {error}")
    return error


def carries_server_text(error: Exception) -> bool:
    """Whether the original error holds the server's words (which may quote the key)."""
    return isinstance(error, openai_package().APIStatusError)


class PackageReplies:
    """Reads the raw responses of the package's client, once per connection each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # replies seen per connection of the package's pool
        self._seen: weakref.WeakKeyDictionary[Any, SeenReplies] = weakref.WeakKeyDictionary()
        self._seen_anywhere = SeenReplies()

    def read(self, response: Any) -> Any:
        """Decode a raw response, refusing one already seen on its connection.

        Raises:
            DuplicateReplyError: The reply is a repeat; its connection was closed.
        """
        payload: bytes = response.content
        data = decode(payload)
        reply_id = data.get("id") if isinstance(data, dict) else None
        stream = response.extensions.get("network_stream")
        with self._lock:
            try:
                seen = self._seen.setdefault(stream, SeenReplies())
            except TypeError:  # no stream to tell connections apart
                seen = self._seen_anywhere
            try:
                seen.check(reply_id if isinstance(reply_id, str) else None, payload)
            except DuplicateReplyError:
                if stream is not None:
                    self._seen.pop(stream, None)
                    stream.close()  # the pool drops a closed connection before reuse
                raise
        return data
