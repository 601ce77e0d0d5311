"""Keeping API keys out of error messages and traces.

A server that rejects a key often quotes it back (``Incorrect API key provided:
sk-...``), and that text ends up in the error, the trace and the terminal. Every
key a backend is configured with is registered here, and :func:`redact` replaces
it, and anything shaped like a key or a bearer token, with ``[redacted]``.
"""

from __future__ import annotations

import re
import threading

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8  # shorter "keys" (local servers take any) would blank out words

_lock = threading.Lock()
_secrets: list[str] = []  # longest first, so a key containing another is removed whole

# Shapes of credentials: OpenAI-style keys, bearer tokens, and `api_key=...` fields.
_SHAPES = re.compile(
    r"(?P<key>\bsk-[A-Za-z0-9_\-]{8,})"
    r"|(?P<bearer>\b[Bb]earer\s+)[A-Za-z0-9._~+/\-]{8,}=*"
    r"|(?P<field>\b(?:api[_-]?key|access[_-]?token|authorization)[\"']?\s*[:=]\s*[\"']?)"
    r"[^\s\"',;}]{8,}",
    re.IGNORECASE,
)


def register_secret(secret: str | None) -> None:
    """Remember a key so that :func:`redact` removes it from every message.

    Args:
        secret: The key; ``None`` and values shorter than 8 characters are ignored.

    Example:
        >>> register_secret("my-server-token-123")
        >>> redact("rejected my-server-token-123")
        'rejected [redacted]'
    """
    if not secret or len(secret) < MIN_SECRET_LENGTH:
        return
    with _lock:
        if secret not in _secrets:
            _secrets.append(secret)
            _secrets.sort(key=len, reverse=True)


def _shape(match: re.Match[str]) -> str:
    prefix = match.group("bearer") or match.group("field") or ""
    return prefix + REDACTED


def redact(text: str) -> str:
    """``text`` with registered keys and key-shaped strings replaced by ``[redacted]``.

    Example:
        >>> redact("Incorrect API key provided: sk-proj-abcdefgh12345678.")
        'Incorrect API key provided: [redacted].'
        >>> redact("Authorization: Bearer abcdefgh.ijkl")
        'Authorization: Bearer [redacted]'
        >>> redact("HTTP 500: internal error")
        'HTTP 500: internal error'
    """
    with _lock:
        secrets = list(_secrets)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return _SHAPES.sub(_shape, text)
