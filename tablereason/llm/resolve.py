"""Model specs to models: the strings ``ask``, the harness and the command line accept.

:func:`base_llm` turns a spec (``None``, ``"local"``, a ``.gguf`` path, a server's model
name) into a bare backend, built by the entry of the backend registry
(:data:`~tablereason.llm.backends.registry.BACKENDS`) that claims it; :func:`default`
chooses from the environment; :func:`stack` wraps a backend in the standard layers
(usage, cache, retries, limits) and :func:`resolve_llm` does both.

Example:
    >>> from tablereason.llm import Request, ScriptedLLM
    >>> resolve_llm(ScriptedLLM(replies=["hi"])).complete(Request(prompt="x")).text
    'hi'
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Literal

from tablereason.errors import ConfigurationError
from tablereason.llm.backends.registry import LOCAL_MODEL, ModelSpec, choose
from tablereason.llm.backends.server.chat import server_endpoint
from tablereason.llm.base import LLM
from tablereason.llm.wrappers.cache import CachedLLM
from tablereason.llm.wrappers.limits import ConcurrencyLimit, LimitedLLM
from tablereason.llm.wrappers.retry import RetryingLLM, RetryPolicy
from tablereason.llm.wrappers.unconstrained import UnconstrainedLLM
from tablereason.llm.wrappers.usage import UsageTracker

__all__ = [
    "LOCAL_MODEL",
    "Constrain",
    "base_llm",
    "default",
    "resolve_llm",
    "server_endpoint",
    "stack",
]

Constrain = Literal["auto", "off"]
"""``auto``: constraints are sent where the server can take them and every constrained
reply is checked; ``off``: requests go out without their constraints, as before them."""

_announce_lock = threading.Lock()
_announced = False


def _from_environment() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


def default(
    *,
    quiet: bool = False,
    endpoint: str | None = None,
    timeout: float | None = None,
    server_kind: str | None = None,
    n_ctx: int | None = None,
    threads: int | None = None,
) -> LLM:
    """The default backend, chosen from the environment.

    An OpenAI-compatible server when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set
    (model from ``$OPENAI_MODEL``, else the one the server serves; the chat endpoint, or
    the completion one when ``endpoint`` or ``$OPENAI_ENDPOINT`` says so), else the
    embedded model (Gemma 3 270M). The choice is printed to stderr once per process.
    Nothing loads until the first request (asking a server for its model aside).

    Args:
        quiet: Do not print the choice.
        endpoint: The server's endpoint (see :func:`server_endpoint`).
        timeout: Seconds one request to the server may take in all (120 when None).
        server_kind: How constraints go to the server (see
            :class:`~tablereason.llm.backends.server.chat.OpenAIChat`).
        n_ctx: The embedded model's context window.
        threads: The embedded model's CPU threads.

    Returns:
        A bare backend; wrap it with :func:`stack` for caching, retries and limits.

    Example:
        >>> llm = default(quiet=True)
        >>> llm.name in ("openai", "local")
        True
    """
    global _announced
    server = _from_environment()
    spec = ModelSpec(
        model=None if server else LOCAL_MODEL,
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        endpoint=endpoint,
        timeout=timeout,
        server_kind=server_kind,
        n_ctx=n_ctx,
        threads=threads,
    )
    llm = choose(spec).make(spec)
    if server:
        where = getattr(llm, "base_url", None) or "api.openai.com"
        api = getattr(llm, "endpoint", "chat")
        line = f"OpenAI-compatible model {llm.model!r} at {where} ({api} endpoint)"
    else:
        line = f"embedded model {llm.model} (set OPENAI_API_KEY or OPENAI_BASE_URL to use a server)"
    with _announce_lock:
        if not _announced and not quiet:
            print(f"tablereason: using {line}", file=sys.stderr, flush=True)
            _announced = True
    return llm


def base_llm(
    model: str | None = None,
    *,
    base_url: str | None = None,
    quiet: bool = False,
    endpoint: str | None = None,
    timeout: float | None = None,
    server_kind: str | None = None,
    n_ctx: int | None = None,
    threads: int | None = None,
) -> LLM:
    """The backend a model spec names, not yet wrapped.

    Args:
        model: ``None`` (choose from the environment, see :func:`default`), ``"local"``
            (the embedded model), a path to a ``.gguf`` file (llama.cpp), or a model name
            served by an OpenAI-compatible server. With a ``base_url`` and no model (and
            no ``$OPENAI_MODEL``), the server is asked which model it serves.
        base_url: The OpenAI-compatible server (``http://127.0.0.1:8000/v1``); implies an
            OpenAI-compatible backend.
        quiet: Do not announce the environment's choice on stderr.
        endpoint: The server's API, ``"chat"`` or ``"completion"``; ``$OPENAI_ENDPOINT``,
            else chat, when None (see :func:`server_endpoint`).
        timeout: Seconds one request to a server may take in all (the backend's 120 s
            when None); no effect on the embedded model.
        server_kind: A server kind of the registry (``"vllm"``, ``"llama.cpp"``...) or
            ``"auto"``; ``$TABLEREASON_SERVER_KIND``, else detected, when None.
        n_ctx: The embedded model's context window in tokens.
        threads: The embedded model's CPU threads.

    Returns:
        The backend. Nothing loads until the first request (a server named without a
        model is asked for it now).

    Raises:
        ConfigurationError: A server's setting with the embedded model or the embedded
            model's with a server, an unknown endpoint or server kind, a ``.gguf`` file
            that does not exist, or a server that serves several models and none named.

    Example:
        >>> base_llm("gpt-4o-mini", base_url="http://127.0.0.1:8000/v1").model
        'gpt-4o-mini'
        >>> base_llm("qwen", base_url="http://127.0.0.1:8000/v1", endpoint="completion").endpoint
        'completion'
    """
    if endpoint is not None:
        server_endpoint(endpoint)  # an unknown name fails here, whatever the model
    options = {
        "endpoint": endpoint,
        "timeout": timeout,
        "server_kind": server_kind,
        "n_ctx": n_ctx,
        "threads": threads,
    }
    if model is None and base_url is None:
        return default(quiet=quiet, **options)  # type: ignore[arg-type]
    spec = ModelSpec(model=model, base_url=base_url, **options)  # type: ignore[arg-type]
    return choose(spec).make(spec)


def stack(
    llm: LLM,
    *,
    cache: str | os.PathLike[str] | None = None,
    offline: bool = False,
    retry: RetryPolicy | None = None,
    max_concurrency: int | ConcurrencyLimit | None = None,
    tracker: UsageTracker | None = None,
    constrain: Constrain = "auto",
) -> LLM:
    """Wrap a backend in the standard layers, outermost first: constraints off, usage, cache...

    The layers, outermost first: constraints off, usage, cache, retry, limit.

    Usage sees every answer once (cache hits flagged, failed attempts never, replies that
    break their constraint counted); cache hits skip retries and slots; retries wait
    without holding a slot. With ``constrain="off"`` requests lose their constraints
    before anything else sees them, so cache keys are those of unconstrained requests.

    Args:
        llm: The backend.
        cache: SQLite file for the response cache (None: no cache).
        offline: Replay from ``cache`` only; a miss raises.
        retry: Retry policy (None: the default policy). Not applied offline.
        max_concurrency: Concurrent requests allowed (None: unlimited); pass one
            :class:`ConcurrencyLimit` to several stacks to share it.
        tracker: Where usage is recorded (None: not recorded).
        constrain: ``"auto"`` (the default) or ``"off"`` (see :data:`Constrain`).

    Returns:
        The wrapped model.

    Example:
        >>> from tablereason.llm.backends.scripted import ScriptedLLM
        >>> tracker = UsageTracker()
        >>> llm = stack(ScriptedLLM(replies=["ok"]), max_concurrency=4, tracker=tracker)
        >>> from tablereason.llm.base import Request
        >>> llm.complete(Request(prompt="hi")).text, tracker.total().requests
        ('ok', 1)
    """
    if constrain not in ("auto", "off"):
        raise ConfigurationError(f"constrain must be 'auto' or 'off', got {constrain!r}")
    out: LLM = llm
    if offline and cache is None:
        raise ConfigurationError("offline replay needs a cache file: pass cache=PATH")
    if not offline:
        if max_concurrency is not None:
            out = LimitedLLM(out, max_concurrency)
        out = RetryingLLM(out, retry)
    if cache is not None:
        out = CachedLLM(out, cache, offline=offline)
    if tracker is not None:
        out = tracker.wrap(out)
    if constrain == "off":
        out = UnconstrainedLLM(out)
    return out


def resolve_llm(
    model: str | LLM | None = None,
    *,
    base_url: str | None = None,
    cache: str | os.PathLike[str] | None = None,
    offline: bool = False,
    max_concurrency: int | None = None,
    tracker: UsageTracker | None = None,
    quiet: bool = False,
    endpoint: str | None = None,
    timeout: float | None = None,
    server_kind: str | None = None,
    constrain: Constrain = "auto",
    n_ctx: int | None = None,
    threads: int | None = None,
) -> LLM:
    """A ready model: the backend :func:`base_llm` names, with cache, retries and limits.

    Args:
        model: A model spec (see :func:`base_llm`) or an LLM object to wrap.
        base_url: OpenAI-compatible server URL.
        cache: SQLite response cache; every answer is recorded there and replayed later.
        offline: Answer only from ``cache`` (a miss is an error); no model is called.
        max_concurrency: Requests in flight at most.
        tracker: Records tokens and cost.
        quiet: Do not announce the environment's choice on stderr.
        endpoint: ``"chat"`` or ``"completion"`` for an OpenAI-compatible server (see
            :func:`base_llm`); not used with an LLM object.
        timeout: Seconds one request to a server may take in all (see :func:`base_llm`);
            not used with an LLM object.
        server_kind: How constraints go to the server (see :func:`base_llm`).
        constrain: ``"auto"`` or ``"off"`` (see :func:`stack`).
        n_ctx: The embedded model's context window (see :func:`base_llm`).
        threads: The embedded model's CPU threads (see :func:`base_llm`).

    Raises:
        ConfigurationError: Offline replay of a server named without a model (the cache
            is keyed by the model's name), and the errors of :func:`base_llm`.

    Example:
        >>> from tablereason.llm import Request, ScriptedLLM
        >>> resolve_llm(ScriptedLLM(replies=["hi"])).complete(Request(prompt="x")).text
        'hi'
    """
    if model is None or isinstance(model, str):
        server = base_url or os.environ.get("OPENAI_BASE_URL")
        unnamed = model is None and not os.environ.get("OPENAI_MODEL")
        if offline and unnamed and server and "api.openai.com" not in server:
            raise ConfigurationError(
                "offline replay of a server needs the model's name (the cache is keyed by "
                "it): give --model (model=)"
            )
        llm = base_llm(
            model,
            base_url=base_url,
            quiet=quiet,
            endpoint=endpoint,
            timeout=timeout,
            server_kind=server_kind,
            n_ctx=n_ctx,
            threads=threads,
        )
    else:
        llm = model
    return stack(
        llm,
        cache=cache,
        offline=offline,
        max_concurrency=max_concurrency,
        tracker=tracker,
        constrain=constrain,
    )
