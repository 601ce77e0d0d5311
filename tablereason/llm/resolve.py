"""Model specs to models: the strings ``ask``, the harness and the command line accept.

:func:`base_llm` turns a spec (``None``, ``"local"``, a ``.gguf`` path, a server's model
name) into a bare backend; :func:`resolve_llm` wraps that backend, or an LLM object, in
the standard layers (cache, retries, limits, usage; see :func:`~tablereason.llm.stack`).

Example:
    >>> from tablereason.llm import Request, ScriptedLLM
    >>> resolve_llm(ScriptedLLM(replies=["hi"])).complete(Request(prompt="x")).text
    'hi'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM
from tablereason.llm.local import LocalLlama
from tablereason.llm.selection import default, server_backend, server_endpoint, stack

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.usage import UsageTracker

LOCAL_MODEL = "local"
"""The model spec that names the embedded model (Gemma 3 270M through llama.cpp)."""

_NO_SERVER = (
    "--endpoint chooses the API of an OpenAI-compatible server, but no server is in use: "
    "give --base-url (or set OPENAI_BASE_URL), or leave --endpoint out for the embedded model"
)


def base_llm(
    model: str | None = None,
    *,
    base_url: str | None = None,
    quiet: bool = False,
    endpoint: str | None = None,
    timeout: float | None = None,
) -> LLM:
    """The backend a model spec names, not yet wrapped.

    Args:
        model: ``None`` (choose from the environment, see :func:`tablereason.llm.default`),
            ``"local"`` (the embedded model), a path to a ``.gguf`` file (llama.cpp), or a
            model name served by an OpenAI-compatible server (``"gpt-4o-mini"``).
        base_url: The OpenAI-compatible server (``http://127.0.0.1:8000/v1``); implies an
            OpenAI-compatible backend.
        quiet: Do not announce the environment's choice on stderr.
        endpoint: The server's API, ``"chat"`` or ``"completion"``; ``$OPENAI_ENDPOINT``,
            else chat, when None (see :func:`tablereason.llm.selection.server_endpoint`).
        timeout: Seconds one request to a server may take in all (the backend's 120 s
            when None); no effect on the embedded model.

    Returns:
        The backend. Nothing connects or loads until the first request.

    Raises:
        ConfigurationError: For an ``endpoint`` given with the embedded model or a
            ``.gguf`` file (they have no endpoint), or an unknown endpoint.

    Example:
        >>> base_llm("gpt-4o-mini", base_url="http://127.0.0.1:8000/v1").model
        'gpt-4o-mini'
        >>> base_llm("qwen", base_url="http://127.0.0.1:8000/v1", endpoint="completion").endpoint
        'completion'
    """
    if endpoint is not None:
        server_endpoint(endpoint)  # an unknown name fails here, whatever the model
    if model is None and base_url is None:
        llm = default(quiet=quiet, endpoint=endpoint, timeout=timeout)
        if endpoint is not None and getattr(llm, "endpoint", None) is None:
            raise ConfigurationError(_NO_SERVER)
        return llm
    if base_url is None and model is not None and (model == LOCAL_MODEL or model.endswith(".gguf")):
        if endpoint is not None:
            raise ConfigurationError(_NO_SERVER)
        if model == LOCAL_MODEL:
            return LocalLlama()
        if not os.path.isfile(model):
            raise ConfigurationError(f"model file {model!r} does not exist; give a .gguf path")
        return LocalLlama(model)
    limits = {} if timeout is None else {"timeout": timeout}
    return server_backend(endpoint, model=model, base_url=base_url, **limits)


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

    Example:
        >>> from tablereason.llm import Request, ScriptedLLM
        >>> resolve_llm(ScriptedLLM(replies=["hi"])).complete(Request(prompt="x")).text
        'hi'
    """
    if model is None or isinstance(model, str):
        llm = base_llm(model, base_url=base_url, quiet=quiet, endpoint=endpoint, timeout=timeout)
    else:
        llm = model
    return stack(
        llm, cache=cache, offline=offline, max_concurrency=max_concurrency, tracker=tracker
    )
