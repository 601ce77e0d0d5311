"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp's server): the endpoints.

:class:`OpenAIChat` speaks ``/v1/chat/completions``, :class:`OpenAICompletion`
``/v1/completions``; what they share (transports, errors, constraints, retries of a
reply delivered twice) is :class:`~tablereason.llm.backends.server.client.ServerBackend`.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from tablereason.errors import ConfigurationError
from tablereason.llm.backends.registry import ModelSpec, chosen_kind
from tablereason.llm.backends.server.client import (
    ENDPOINT_ENV,
    ENDPOINT_HINT,
    ServerBackend,
    Transport,
)
from tablereason.llm.backends.server.package import translate_error
from tablereason.llm.backends.server.status import parse_retry_after
from tablereason.llm.base import Request

__all__ = [
    "ENDPOINT_ENV",
    "ENDPOINT_HINT",
    "OpenAIChat",
    "OpenAICompletion",
    "Transport",
    "from_spec",
    "parse_retry_after",
    "server_endpoint",
    "translate_error",
]

Endpoint = Literal["chat", "completion"]


class OpenAIChat(ServerBackend):
    """Chat completions (``/v1/chat/completions``) from OpenAI or a compatible server.

    A prompt-only request is sent as one user message. ``n > 1`` goes out as one
    request; when the server returns fewer choices (llama.cpp's server ignores ``n``),
    the rest are asked for one at a time (``seed + i`` when a seed is set) and the
    backend remembers to do so from then on. A reply whose choices are all empty
    raises :class:`~tablereason.llm.errors.EmptyCompletionError` (seen with base models
    that have no chat template) rather than passing an empty answer on.

    Args:
        model: Model name; defaults to ``$OPENAI_MODEL``, else, for a ``base_url`` other
            than OpenAI's, the one model the server lists at ``/models`` (asked now; a
            server listing several says which to choose), else ``gpt-4o-mini``.
        base_url: Server URL; defaults to ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: Key; defaults to ``$OPENAI_API_KEY`` (any value for local servers).
        timeout: Seconds one whole request may take (connecting and every read included).
        supports_n: Start out assuming the server honours ``n``.
        allow_empty: Return all-empty chat replies instead of raising.
        max_workers: Threads serving :meth:`acomplete` calls.
        transport: ``"openai"`` sends through the ``openai`` package; ``"http"``
            through the lean :class:`~tablereason.llm.backends.server.transport.JSONTransport`
            (a fraction of the CPU per request, for high-concurrency runs against
            self-hosted servers); ``"auto"`` picks ``"http"`` for a ``base_url`` other
            than OpenAI's that no proxy applies to, ``"openai"`` otherwise.
        server_kind: How constraints are sent: a server entry of
            :data:`~tablereason.llm.backends.registry.BACKENDS` (``"vllm"``,
            ``"llama.cpp"``...), or ``"auto"`` (``$TABLEREASON_SERVER_KIND``, else detected
            on the first constrained request).

    Example:
        >>> llm = OpenAIChat("gpt-4o-mini", api_key="sk-test")  # no network until used
        >>> llm.name, llm.model, llm.transport
        ('openai', 'gpt-4o-mini', 'openai')
        >>> OpenAIChat("m", base_url="http://127.0.0.1:8000/v1").transport
        'http'
    """

    default_model = "gpt-4o-mini"
    endpoint = "chat"

    def _body(self, request: Request, n: int, seed: int | None) -> dict[str, Any]:
        kwargs = self._kwargs(request, n, seed)
        messages = request.messages or ()
        if request.prompt is not None:
            kwargs["messages"] = [{"role": "user", "content": request.prompt}]
        else:
            kwargs["messages"] = [{"role": m.role, "content": m.content} for m in messages]
        if request.logprobs:
            kwargs["logprobs"] = True
        return kwargs

    def _create(self, body: dict[str, Any], extra: dict[str, Any]) -> Any:
        create = self.client().chat.completions.with_raw_response.create
        return create(**body, extra_body=extra or None)


class OpenAICompletion(ServerBackend):
    """Text completions (``/v1/completions``): the raw prompt, no chat template.

    Chat requests are flattened with :meth:`Request.as_text`. ``n`` is handled as in
    :class:`OpenAIChat`.

    Args:
        model: Model name; defaults as for :class:`OpenAIChat` (``gpt-3.5-turbo-instruct``
            on OpenAI's API).
        base_url: Server URL; defaults to ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: Key; defaults to ``$OPENAI_API_KEY`` (any value for local servers).
        timeout: Seconds one whole request may take (connecting and every read included).
        supports_n: Start out assuming the server honours ``n``.
        allow_empty: Unused here (empty text completions are returned as they are).
        max_workers: Threads serving :meth:`acomplete` calls.
        transport: ``"auto"``, ``"openai"`` or ``"http"``, as for :class:`OpenAIChat`.
        server_kind: As for :class:`OpenAIChat`.

    Example:
        >>> OpenAICompletion("davinci-002", base_url="http://127.0.0.1:9/v1").base_url
        'http://127.0.0.1:9/v1'
    """

    default_model = "gpt-3.5-turbo-instruct"
    endpoint = "completion"

    path = "/completions"

    def _body(self, request: Request, n: int, seed: int | None) -> dict[str, Any]:
        kwargs = self._kwargs(request, n, seed)
        kwargs["prompt"] = request.as_text()
        if request.logprobs:
            kwargs["logprobs"] = 1
        return kwargs

    def _create(self, body: dict[str, Any], extra: dict[str, Any]) -> Any:
        create = self.client().completions.with_raw_response.create
        return create(**body, extra_body=extra or None)


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


def from_spec(spec: ModelSpec) -> OpenAIChat | OpenAICompletion:
    """The server backend a model spec names (the registry's builder for servers).

    Raises:
        ConfigurationError: An unknown endpoint or server kind, or settings of the
            embedded model (``n_ctx``, ``threads``) given for a server.

    Example:
        >>> from_spec(ModelSpec("qwen", base_url="http://127.0.0.1:9/v1", endpoint="completion"))
        OpenAICompletion(model='qwen', base_url='http://127.0.0.1:9/v1')
    """
    if spec.n_ctx is not None or spec.threads is not None:
        raise ConfigurationError(
            "--n-ctx and --threads set the embedded model, but a server is in use: leave them "
            "out, or use --model local"
        )
    chosen = OpenAICompletion if server_endpoint(spec.endpoint) == "completion" else OpenAIChat
    options: dict[str, Any] = {} if spec.timeout is None else {"timeout": spec.timeout}
    return chosen(
        spec.model,
        base_url=spec.base_url,
        server_kind=chosen_kind(spec.server_kind),
        **options,
    )
