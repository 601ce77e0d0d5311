"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp's server).

Requests go through the ``openai`` package (imported on first use) or, for
self-hosted servers, through the lean :mod:`~tablereason.llm.http_transport`, which
costs a fraction of the CPU per request; ``transport=`` chooses, ``"auto"`` by default.
The package's own retries are switched off (``max_retries=0``):
:class:`~tablereason.llm.retry.RetryingLLM` is the one retry policy. Both paths
translate errors the same way: rate limits, 5xx, timeouts, dropped connections and
malformed replies become :class:`~tablereason.llm.errors.TransientLLMError` (with the
server's Retry-After), an over-long prompt becomes
:class:`~tablereason.llm.errors.ContextLengthError`.

Both paths also read the reply body the same way (:mod:`~tablereason.llm.replies`):
its shape is checked field by field (a wrong shape is a
:class:`~tablereason.llm.errors.MalformedReplyError`), a reply delivered twice on one
connection is refused (:class:`~tablereason.llm.errors.DuplicateReplyError`), and
``timeout`` bounds the whole request (:mod:`~tablereason.llm.deadline`). Keys are
redacted from every error message (:mod:`~tablereason.llm.redaction`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from tablereason.errors import (
    ConfigurationError,
    MissingDependencyError,
    TableReasonError,
)
from tablereason.llm.base import Choice, Completion, Request, Usage
from tablereason.llm.deadline import deadline_after, enforce_deadlines
from tablereason.llm.errors import (
    DuplicateReplyError,
    EmptyCompletionError,
    MalformedReplyError,
    TransientLLMError,
)
from tablereason.llm.http_errors import error_message, parse_retry_after, status_error
from tablereason.llm.http_transport import JSONTransport, proxied
from tablereason.llm.redaction import register_secret
from tablereason.llm.replies import Reply, SeenReplies, decode, read_reply
from tablereason.llm.stops import mend_blank_stops

log = logging.getLogger(__name__)

__all__ = ["OpenAIChat", "OpenAICompletion", "parse_retry_after", "translate_error"]

Transport = Literal["auto", "openai", "http"]
ENDPOINT_ENV = "OPENAI_ENDPOINT"
ENDPOINT_HINT = f"--endpoint completion, {ENDPOINT_ENV}=completion or OpenAICompletion"


def _openai() -> Any:
    try:
        import openai
    except ImportError as error:  # pragma: no cover - openai is a core dependency
        raise MissingDependencyError(
            "the OpenAI backend needs the `openai` package: pip install 'openai>=1.30'"
        ) from error
    return openai


def translate_error(error: Exception, *, timeout: float) -> Exception:
    """Map an exception from the ``openai`` client to this package's error types."""
    if isinstance(error, TableReasonError):
        return error
    openai = _openai()
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


def _carries_server_text(error: Exception) -> bool:
    """Whether the original error holds the server's words (which may quote the key)."""
    openai = _openai()
    return isinstance(error, openai.APIStatusError)


class _OpenAIBase:
    """Shared client handling; subclasses choose the endpoint."""

    name = "openai"
    default_model = ""
    endpoint: Literal["chat", "completion"] = "chat"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        supports_n: bool = True,
        allow_empty: bool = False,
        max_workers: int = 64,
        transport: Transport = "auto",
    ) -> None:
        if transport not in ("auto", "openai", "http"):
            raise ConfigurationError(
                f"transport must be 'auto', 'openai' or 'http', got {transport!r}"
            )
        self.model = model or os.environ.get("OPENAI_MODEL") or self.default_model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        self.timeout = timeout
        self.supports_n = supports_n
        self._lock = threading.Lock()
        self.allow_empty = allow_empty
        self.max_workers = max_workers
        self._client: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._transport: JSONTransport | None = None
        # replies seen per connection of the openai package's pool (see _read_raw)
        self._seen: weakref.WeakKeyDictionary[Any, SeenReplies] = weakref.WeakKeyDictionary()
        self._seen_anywhere = SeenReplies()
        self.transport: Literal["openai", "http"] = (
            transport if transport != "auto" else self._auto_transport()
        )

    def _auto_transport(self) -> Literal["openai", "http"]:
        """``http`` for a self-hosted server no proxy applies to; ``openai`` otherwise."""
        if self.base_url is None or "api.openai.com" in self.base_url:
            return "openai"
        return "openai" if proxied(self.base_url) else "http"

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"{type(self).__name__}(model={self.model!r}{where})"

    def _key(self) -> str:
        key = self._api_key
        if key is None:
            if self.base_url is None:
                raise ConfigurationError(
                    "no OpenAI credentials: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local "
                    "OpenAI-compatible server), or pass api_key= / base_url="
                )
            key = "not-needed"  # local servers accept any key
        else:
            register_secret(key)
        return key

    def _client_args(self) -> dict[str, Any]:
        return {
            "api_key": self._key(),
            "base_url": self.base_url,
            "timeout": self.timeout,
            "max_retries": 0,
        }

    def client(self) -> Any:
        """The synchronous ``openai.OpenAI`` client (created on first use).

        Its HTTP client's connections honour the whole-request deadline
        (:func:`~tablereason.llm.deadline.enforce_deadlines`).
        """
        with self._lock:
            if self._client is None:
                openai = _openai()
                http_client = openai.DefaultHttpxClient()
                enforce_deadlines(http_client)
                self._client = openai.OpenAI(**self._client_args(), http_client=http_client)
            return self._client

    def http(self) -> JSONTransport:
        """The lean JSON transport (created on first use)."""
        with self._lock:
            if self._transport is None:
                self._transport = JSONTransport(
                    self.base_url or "https://api.openai.com/v1",
                    api_key=self._key(),
                    timeout=self.timeout,
                )
            return self._transport

    # -- wire format ----------------------------------------------------------------------
    def _kwargs(self, request: Request, n: int, seed: int | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
        }
        if n != 1:
            kwargs["n"] = n
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if seed is not None:
            kwargs["seed"] = seed
        return kwargs

    path = "/chat/completions"

    def _body(self, request: Request, n: int, seed: int | None) -> dict[str, Any]:
        raise NotImplementedError

    def _create(self, body: dict[str, Any]) -> Any:
        """Send ``body`` through the ``openai`` package; its raw (unparsed) response."""
        raise NotImplementedError

    def _send(self, request: Request, n: int, seed: int | None) -> Reply:
        body = self._body(request, n, seed)
        if self.transport == "http":
            return read_reply(self.http().post(self.path, body), self.endpoint)
        with deadline_after(self.timeout):
            raw = self._create(body)
        return read_reply(self._read_raw(raw.http_response), self.endpoint)

    def _read_raw(self, response: Any) -> Any:
        """Decode an ``openai``-path reply, refusing one already seen on its connection."""
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

    # -- control flow ---------------------------------------------------------------------
    def _plan(self, request: Request) -> tuple[int, int]:
        """(choices asked in the first call, separate single calls planned)."""
        if request.n == 1 or self.supports_n:
            return request.n, 0
        return 1, request.n - 1

    def _note_missing(self, asked: int, got: int) -> int:
        missing = asked - got
        if missing > 0 and self.supports_n and asked > 1:
            log.warning(
                "%s returned %d of %d choices: the server ignores `n`; asking one at a time",
                self.base_url or "the server",
                got,
                asked,
            )
            self.supports_n = False
        return missing

    def _seed(self, request: Request, i: int) -> int | None:
        return None if request.seed is None else request.seed + i

    def _finish(self, request: Request, replies: list[Reply], started: float) -> Completion:
        choices: list[Choice] = []
        usage = Usage(requests=0)
        for reply in replies:
            choices.extend(reply.choices)
            usage = usage + reply.usage
        usage = usage.model_copy(update={"requests": 1})
        choices, again = mend_blank_stops(request, choices, self._ask_again)
        if again is not None:  # a whitespace stop emptied the reply: asked once more
            usage = usage + again
        empty = all(c.text == "" for c in choices)
        if self.endpoint == "chat" and empty and not self.allow_empty:
            raise EmptyCompletionError(
                f"{self.base_url or 'the server'} returned empty chat completions for model "
                f"{self.model!r} (call site {request.call_site!r}); the model may have no chat "
                f"template: use its completion endpoint ({ENDPOINT_HINT}), or a chat-tuned model"
            )
        model = replies[0].model or self.model
        return Completion(
            choices=tuple(choices[: request.n]),
            usage=usage,
            latency_s=time.perf_counter() - started,
            backend=self.name,
            model=str(model),
        )

    def _ask_again(self, request: Request) -> tuple[tuple[Choice, ...], Usage]:
        """Answer a follow-up request (see :func:`~tablereason.llm.stops.mend_blank_stops`)."""
        completion = self.complete(request)
        return completion.choices, completion.usage

    def complete(self, request: Request) -> Completion:
        """Send the request; make up choices a server did not return one call at a time."""
        started = time.perf_counter()
        try:
            asked, extra = self._plan(request)
            replies = [self._send(request, asked, request.seed)]
            extra += self._note_missing(asked, len(replies[0].choices))
            for i in range(request.n - extra, request.n):
                replies.append(self._send(request, 1, self._seed(request, i)))
        except TableReasonError:
            raise
        except Exception as error:
            translated = translate_error(error, timeout=self.timeout)
            if translated is error:
                raise
            # the server's own error text may quote the key: keep it out of the chain
            raise translated from (None if _carries_server_text(error) else error)
        return self._finish(request, replies, started)

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`, run in this backend's own thread pool.

        The synchronous client is thread-safe and, measured here, sustains higher
        throughput than ``AsyncOpenAI``; the pool (``max_workers`` threads) keeps the
        event loop free and does not compete for asyncio's small default executor.
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), self.complete, request)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="openai")
            return self._pool


class OpenAIChat(_OpenAIBase):
    """Chat completions (``/v1/chat/completions``) from OpenAI or a compatible server.

    A prompt-only request is sent as one user message. ``n > 1`` goes out as one
    request; when the server returns fewer choices (llama.cpp's server ignores ``n``),
    the rest are asked for one at a time (``seed + i`` when a seed is set) and the
    backend remembers to do so from then on. A reply whose choices are all empty
    raises :class:`~tablereason.llm.errors.EmptyCompletionError` (seen with base models
    that have no chat template) rather than passing an empty answer on.

    Args:
        model: Model name; defaults to ``$OPENAI_MODEL`` or ``gpt-4o-mini``.
        base_url: Server URL; defaults to ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: Key; defaults to ``$OPENAI_API_KEY`` (any value for local servers).
        timeout: Seconds one whole request may take (connecting and every read included).
        supports_n: Start out assuming the server honours ``n``.
        allow_empty: Return all-empty chat replies instead of raising.
        max_workers: Threads serving :meth:`acomplete` calls.
        transport: ``"openai"`` sends through the ``openai`` package; ``"http"``
            through the lean :class:`~tablereason.llm.http_transport.JSONTransport`
            (a fraction of the CPU per request, for high-concurrency runs against
            self-hosted servers); ``"auto"`` picks ``"http"`` for a ``base_url`` other
            than OpenAI's that no proxy applies to, ``"openai"`` otherwise.

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

    def _create(self, body: dict[str, Any]) -> Any:
        return self.client().chat.completions.with_raw_response.create(**body)


class OpenAICompletion(_OpenAIBase):
    """Text completions (``/v1/completions``): the raw prompt, no chat template.

    Chat requests are flattened with :meth:`Request.as_text`. ``n`` is handled as in
    :class:`OpenAIChat`.

    Args:
        model: Model name; defaults to ``$OPENAI_MODEL`` or ``gpt-3.5-turbo-instruct``.
        base_url: Server URL; defaults to ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: Key; defaults to ``$OPENAI_API_KEY`` (any value for local servers).
        timeout: Seconds one whole request may take (connecting and every read included).
        supports_n: Start out assuming the server honours ``n``.
        allow_empty: Unused here (empty text completions are returned as they are).
        max_workers: Threads serving :meth:`acomplete` calls.
        transport: ``"auto"``, ``"openai"`` or ``"http"``, as for :class:`OpenAIChat`.

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

    def _create(self, body: dict[str, Any]) -> Any:
        return self.client().completions.with_raw_response.create(**body)
