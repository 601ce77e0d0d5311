"""Choosing a backend from the environment, and stacking the standard wrappers."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Literal

from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM
from tablereason.llm.cache import CachedLLM
from tablereason.llm.limits import ConcurrencyLimit, LimitedLLM
from tablereason.llm.local import LocalLlama
from tablereason.llm.openai_backend import ENDPOINT_ENV, OpenAIChat, OpenAICompletion
from tablereason.llm.retry import RetryingLLM, RetryPolicy
from tablereason.llm.usage import UsageTracker

_announce_lock = threading.Lock()
_announced = False

Endpoint = Literal["chat", "completion"]


def server_endpoint(endpoint: str | None = None) -> Endpoint:
    """The API of an OpenAI-compatible server to use: ``endpoint``, else ``$OPENAI_ENDPOINT``.

    ``"chat"`` (``/v1/chat/completions``, the default) sends the prompt as a chat
    message; ``"completion"`` (``/v1/completions``) sends the raw prompt, which suits
    base models and small chat models that answer chat messages poorly.

    Raises:
        ConfigurationError: For any other value.

    Example:
        >>> server_endpoint("completion"), server_endpoint("Chat")
        ('completion', 'chat')
    """
    explicit = endpoint is not None
    value = (endpoint if explicit else os.environ.get(ENDPOINT_ENV)) or "chat"
    cleaned = value.strip().lower()
    if cleaned == "chat":
        return "chat"
    if cleaned == "completion":
        return "completion"
    where = "--endpoint / endpoint=" if explicit else f"${ENDPOINT_ENV}"
    raise ConfigurationError(
        f"unknown endpoint {value!r} in {where}: use 'chat' (/v1/chat/completions) or "
        "'completion' (/v1/completions)"
    )


def server_backend(endpoint: str | None = None, **options: Any) -> OpenAIChat | OpenAICompletion:
    """An OpenAI-compatible backend for the endpoint :func:`server_endpoint` names.

    Args:
        endpoint: ``"chat"`` or ``"completion"``; ``$OPENAI_ENDPOINT`` or chat when None.
        **options: Passed to :class:`OpenAIChat` or :class:`OpenAICompletion`.

    Example:
        >>> type(server_backend("completion", base_url="http://127.0.0.1:9/v1")).__name__
        'OpenAICompletion'
    """
    chosen = OpenAICompletion if server_endpoint(endpoint) == "completion" else OpenAIChat
    return chosen(**options)


def default(
    *, quiet: bool = False, endpoint: str | None = None, timeout: float | None = None
) -> LLM:
    """The default backend, chosen from the environment.

    An OpenAI-compatible server (model from ``$OPENAI_MODEL``; :class:`OpenAIChat`, or
    :class:`OpenAICompletion` when ``endpoint`` or ``$OPENAI_ENDPOINT`` says
    ``completion``) when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set, else the
    embedded :class:`LocalLlama` with Gemma 3 270M. The choice is printed to stderr
    once per process. Nothing connects or loads until the first request.

    Args:
        quiet: Do not print the choice.
        endpoint: The server's endpoint (see :func:`server_endpoint`); unused for the
            embedded model.
        timeout: Seconds one request to the server may take in all (120 when None);
            unused for the embedded model.

    Returns:
        A bare backend; wrap it with :func:`stack` for caching, retries and limits.

    Example:
        >>> llm = default(quiet=True)
        >>> llm.name in ("openai", "local")
        True
    """
    global _announced
    llm: LLM
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        server = server_backend(endpoint, **({} if timeout is None else {"timeout": timeout}))
        where = server.base_url or "api.openai.com"
        llm = server
        line = f"OpenAI-compatible model {server.model!r} at {where} ({server.endpoint} endpoint)"
    else:
        llm = LocalLlama()
        line = f"embedded model {llm.model} (set OPENAI_API_KEY or OPENAI_BASE_URL to use a server)"
    with _announce_lock:
        if not _announced and not quiet:
            print(f"tablereason: using {line}", file=sys.stderr, flush=True)
            _announced = True
    return llm


def stack(
    llm: LLM,
    *,
    cache: str | os.PathLike[str] | None = None,
    offline: bool = False,
    retry: RetryPolicy | None = None,
    max_concurrency: int | ConcurrencyLimit | None = None,
    tracker: UsageTracker | None = None,
) -> LLM:
    """Wrap a backend in the standard layers, outermost first: usage, cache, retry, limit.

    Usage sees every answer once (cache hits flagged, failed attempts never); cache
    hits skip retries and slots; retries wait without holding a slot.

    Args:
        llm: The backend.
        cache: SQLite file for the response cache (None: no cache).
        offline: Replay from ``cache`` only; a miss raises.
        retry: Retry policy (None: the default policy). Not applied offline.
        max_concurrency: Concurrent requests allowed (None: unlimited); pass one
            :class:`ConcurrencyLimit` to several stacks to share it.
        tracker: Where usage is recorded (None: not recorded).

    Returns:
        The wrapped model.

    Example:
        >>> from tablereason.llm.scripted import ScriptedLLM
        >>> tracker = UsageTracker()
        >>> llm = stack(ScriptedLLM(replies=["ok"]), max_concurrency=4, tracker=tracker)
        >>> from tablereason.llm.base import Request
        >>> llm.complete(Request(prompt="hi")).text, tracker.total().requests
        ('ok', 1)
    """
    out: LLM = llm
    if offline and cache is None:
        from tablereason.errors import ConfigurationError

        raise ConfigurationError("offline replay needs a cache file: pass cache=PATH")
    if not offline:
        if max_concurrency is not None:
            out = LimitedLLM(out, max_concurrency)
        out = RetryingLLM(out, retry)
    if cache is not None:
        out = CachedLLM(out, cache, offline=offline)
    if tracker is not None:
        out = tracker.wrap(out)
    return out
