"""How HTTP error replies of OpenAI-compatible servers map to this package's errors.

Shared by the ``openai``-package path and the lean JSON transport, so both retry and
report the same way.
"""

from __future__ import annotations

import email.utils
import re
import time
from typing import Any

from tablereason.errors import LLMError
from tablereason.llm.errors import ContextLengthError, TransientLLMError

_CONTEXT_RE = re.compile(
    r"context[ _](length|window)|maximum context|too many tokens|prompt is too long|"
    r"input is too long|exceeds? the (model'?s? )?(maximum|context)",
    re.IGNORECASE,
)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date).

    Example:
        >>> parse_retry_after({"retry-after": "2"})
        2.0
    """
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value) if value else None
        return None if when is None else max(0.0, when.timestamp() - time.time())


def status_error(status: int, message: str, headers: Any) -> LLMError:
    """The error for an HTTP error reply, as the ``openai`` path maps it.

    Args:
        status: The HTTP status.
        message: The server's error message.
        headers: Reply headers (for Retry-After).

    Returns:
        :class:`ContextLengthError` for an over-long prompt, :class:`TransientLLMError`
        for 408, 409, 429 and 5xx, a plain :class:`LLMError` otherwise.

    Example:
        >>> type(status_error(429, "slow down", {"retry-after": "1"})).__name__
        'TransientLLMError'
    """
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
