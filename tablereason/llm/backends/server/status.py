"""How HTTP error replies of OpenAI-compatible servers map to this package's errors.

Shared by the ``openai``-package path and the lean JSON transport, so both retry and
report the same way.
"""

from __future__ import annotations

import datetime
import email.utils
import json
import math
import re
import time
from typing import Any

from tablereason.errors import LLMError
from tablereason.llm.errors import ContextLengthError, TransientLLMError
from tablereason.llm.redaction import redact

_CONTEXT_RE = re.compile(
    r"context[ _](length|window)|maximum context|too many tokens|prompt is too long|"
    r"input is too long|exceeds? the (model'?s? )?(maximum|context)",
    re.IGNORECASE,
)


MAX_RETRY_AFTER_S = 3600.0
"""A server-requested wait longer than this (an hour) is read as this long.

The wait actually taken is capped lower, at ``RetryPolicy.max_retry_after``
(300 s by default).
"""


def _seconds(value: str | None, scale: float) -> float | None:
    """A delay in seconds from a number of ``scale`` units; None when unusable."""
    if value is None:
        return None
    try:
        number = float(value.strip()) / scale
    except (ValueError, AttributeError):
        return None
    if math.isnan(number) or number < 0:
        return None
    return min(number, MAX_RETRY_AFTER_S)


def _until(value: str) -> float | None:
    """Seconds until an HTTP date (0 when it has passed); None when it is no date."""
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # HTTP dates are in GMT
        when = when.replace(tzinfo=datetime.timezone.utc)
    return min(max(0.0, when.timestamp() - time.time()), MAX_RETRY_AFTER_S)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date).

    A value that does not parse (``soon``, a negative number, ``NaN``, a broken date) is
    treated as absent, so the retry policy's own backoff applies. A date in the past
    means 0; anything above :data:`MAX_RETRY_AFTER_S` (an hour, ``inf`` included)
    reads as an hour.

    Example:
        >>> parse_retry_after({"retry-after": "2"})
        2.0
        >>> parse_retry_after({"retry-after": "soon"}) is None
        True
        >>> parse_retry_after({"retry-after": "1e12"})
        3600.0
    """
    if headers is None:
        return None
    seconds = _seconds(headers.get("retry-after-ms"), 1000.0)
    if seconds is not None:
        return seconds
    value = headers.get("retry-after")
    if not isinstance(value, str) or not value.strip():
        return None
    seconds = _seconds(value, 1.0)
    return seconds if seconds is not None else _until(value)


def error_message(body: bytes) -> str:
    """The server's message in an error reply: ``error.message`` of a JSON body, else its text.

    Example:
        >>> error_message(b'{"error": {"message": "invalid key"}}')
        'invalid key'
        >>> error_message(b"overloaded")
        'overloaded'
    """
    text = body.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        return text[:500] or "(no body)"
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return text[:500]


def status_error(status: int, message: str, headers: Any) -> LLMError:
    """The error for an HTTP error reply, as the ``openai`` path maps it.

    Args:
        status: The HTTP status.
        message: The server's error message.
        headers: Reply headers (for Retry-After).

    Returns:
        :class:`ContextLengthError` for an over-long prompt, :class:`TransientLLMError`
        for 408, 409, 429 and 5xx, a plain :class:`LLMError` otherwise. The server's
        message is redacted (:func:`~tablereason.llm.redaction.redact`): a key it
        quotes back is not repeated.

    Example:
        >>> type(status_error(429, "slow down", {"retry-after": "1"})).__name__
        'TransientLLMError'
    """
    message = redact(message)
    if status in (400, 413, 422) and _CONTEXT_RE.search(message):
        return ContextLengthError(
            f"the prompt does not fit the model's context window ({message}); "
            "shrink the table view or the demonstrations"
        )
    if status in (408, 409, 429) or status >= 500:
        return TransientLLMError(
            f"HTTP {status}: {message}", status=status, retry_after=parse_retry_after(headers)
        )
    hint = " (check OPENAI_API_KEY)" if status in (401, 403) else ""
    return LLMError(f"the server rejected the request with HTTP {status}: {message}{hint}")
