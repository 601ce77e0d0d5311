"""The client of OpenAI-compatible servers, shared by the chat and completion endpoints.

Requests go through the ``openai`` package (:mod:`.package`, imported on first use) or,
for self-hosted servers, through the lean :mod:`~tablereason.llm.backends.server.transport`,
which costs a fraction of the CPU per request; ``transport=`` chooses, ``"auto"`` by
default. Both paths translate errors the same way: rate limits, 5xx, timeouts, dropped
connections and malformed replies become :class:`~tablereason.llm.errors.TransientLLMError`
(with the server's Retry-After), an over-long prompt becomes
:class:`~tablereason.llm.errors.ContextLengthError`.

Both paths also read the reply body the same way (:mod:`.replies`): its shape is checked
field by field (a wrong shape is a :class:`~tablereason.llm.errors.MalformedReplyError`),
and ``timeout`` bounds the whole request (:mod:`.deadline`). A reply delivered twice on
one connection is refused (:class:`~tablereason.llm.errors.DuplicateReplyError`) and the
request is sent once more on a fresh connection, so it gets its own reply. Keys are
redacted from every error message (:mod:`~tablereason.llm.redaction`).

A request's constraint goes in the fields the server's kind reads (:mod:`.dialects`; the
kind is ``server_kind=``, ``$TABLEREASON_SERVER_KIND``, or detected on the first
constrained request, :mod:`.probe`), and every constrained reply is checked
(:mod:`~tablereason.llm.backends.enforcement`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from tablereason.errors import ConfigurationError, TableReasonError
from tablereason.llm.backends.enforcement import Enforcement
from tablereason.llm.backends.registry import AUTO, BACKENDS, chosen_kind
from tablereason.llm.backends.server.deadline import deadline_after
from tablereason.llm.backends.server.dialects import Sent
from tablereason.llm.backends.server.package import (
    PackageReplies,
    carries_server_text,
    new_client,
    translate_error,
)
from tablereason.llm.backends.server.probe import detect, only_model
from tablereason.llm.backends.server.replies import Reply, read_reply
from tablereason.llm.backends.server.transport import JSONTransport, proxied
from tablereason.llm.backends.stops import mend_blank_stops
from tablereason.llm.base import Capabilities, Choice, Completion, Request, Usage
from tablereason.llm.errors import DuplicateReplyError, EmptyCompletionError
from tablereason.llm.redaction import register_secret

log = logging.getLogger(__name__)

Transport = Literal["auto", "openai", "http"]
ENDPOINT_ENV = "OPENAI_ENDPOINT"
ENDPOINT_HINT = f"--endpoint completion, {ENDPOINT_ENV}=completion or OpenAICompletion"
MODELS_TIMEOUT_S = 10.0
"""Seconds allowed for asking a server which models it serves."""


def _openai_url(base_url: str | None) -> bool:
    return base_url is None or "api.openai.com" in base_url


class ServerBackend:
    """What both endpoints share: the client, the wire format, constraints, control flow.

    :class:`~tablereason.llm.backends.server.chat.OpenAIChat` and
    :class:`~tablereason.llm.backends.server.chat.OpenAICompletion` choose the endpoint.
    """

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
        server_kind: str | None = None,
    ) -> None:
        if transport not in ("auto", "openai", "http"):
            raise ConfigurationError(
                f"transport must be 'auto', 'openai' or 'http', got {transport!r}"
            )
        self.server_kind = chosen_kind(server_kind)
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
        self._replies = PackageReplies()
        self._kind: str | None = None if self.server_kind == AUTO else self.server_kind
        self.transport: Literal["openai", "http"] = (
            transport if transport != "auto" else self._auto_transport()
        )
        self.model = model or os.environ.get("OPENAI_MODEL") or self._served_model()
        self.enforcement = Enforcement(f"the server at {self.base_url or 'api.openai.com'}")

    def _served_model(self) -> str:
        """OpenAI's default model, or the one a self-hosted server serves."""
        if _openai_url(self.base_url):
            return self.default_model
        timeout = min(self.timeout, MODELS_TIMEOUT_S)
        return only_model(str(self.base_url), api_key=self._key(), timeout=timeout)

    @property
    def kind(self) -> str:
        """The server's kind: ``server_kind``, or detected on first use (never fails)."""
        if self._kind is None:
            info = detect(self.base_url, api_key=self._api_key or "not-needed")
            self._kind = info.kind
        return self._kind

    @property
    def capabilities(self) -> Capabilities:
        """What this server supports (its kind's entry in the registry, and ``n`` as seen)."""
        declared = BACKENDS.get(self.kind).capabilities
        return declared if self.supports_n else dataclasses.replace(declared, n=False)

    def _auto_transport(self) -> Literal["openai", "http"]:
        """``http`` for a self-hosted server no proxy applies to; ``openai`` otherwise."""
        if self.base_url is None or _openai_url(self.base_url):
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

    def client(self) -> Any:
        """The synchronous ``openai.OpenAI`` client (created on first use).

        Its HTTP client's connections honour the whole-request deadline
        (:func:`~tablereason.llm.backends.server.deadline.enforce_deadlines`).
        """
        with self._lock:
            if self._client is None:
                self._client = new_client(
                    api_key=self._key(), base_url=self.base_url, timeout=self.timeout
                )
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

    def _create(self, body: dict[str, Any], extra: dict[str, Any]) -> Any:
        """Send ``body`` and the ``extra`` fields through the ``openai`` package.

        Returns the raw (unparsed) response.
        """
        raise NotImplementedError

    def _constraint(self, request: Request) -> Sent | None:
        """The fields that carry the request's constraint to this server, if any are sent."""
        if request.constraint is None or not self.enforcement.will_send(request):
            return None
        kind = self.kind
        self.enforcement.where = f"the {kind} server at {self.base_url or 'api.openai.com'}"
        return BACKENDS.get(kind).dialect(request.constraint, self.endpoint)

    def _send(self, request: Request, n: int, seed: int | None, sent: Sent | None) -> Reply:
        """One request, and its reply.

        The request is sent once more, on a fresh connection, when the reply read was one
        the connection had delivered before (the request's own reply is then lost).
        """
        body = self._body(request, n, seed)
        extra = sent.fields if sent is not None else {}
        try:
            return self._round_trip(body, extra)
        except DuplicateReplyError as error:
            log.info("%s: %s; sending the request again", self.base_url or "the server", error)
            return self._round_trip(body, extra)

    def _round_trip(self, body: dict[str, Any], extra: dict[str, Any]) -> Reply:
        if self.transport == "http":
            return read_reply(self.http().post(self.path, {**body, **extra}), self.endpoint)
        with deadline_after(self.timeout):
            raw = self._create(body, extra)
        return read_reply(self._replies.read(raw.http_response), self.endpoint)

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

    def _finish(
        self, request: Request, replies: list[Reply], started: float, sent: Sent | None
    ) -> Completion:
        choices: list[Choice] = []
        usage = Usage(requests=0)
        for reply in replies:
            choices.extend(reply.choices)
            usage = usage + reply.usage
        usage = usage.model_copy(update={"requests": 1})
        if sent is not None:  # the reply to a wrapped schema: the slot's text inside it
            choices = [c.model_copy(update={"text": sent.unwrap(c.text)}) for c in choices]
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
        """Answer a follow-up request (see :func:`.stops.mend_blank_stops`).

        The caller checks what it makes of the answer.
        """
        completion = self._answer(request, self._constraint(request))
        return completion.choices, completion.usage

    def complete(self, request: Request) -> Completion:
        """Send the request; make up choices a server did not return one call at a time.

        Raises:
            ConstraintViolationError: A choice breaks the request's constraint.
        """
        sent = self._constraint(request)
        completion = self._answer(request, sent)
        return self.enforcement.check(request, completion, sent=sent is not None)

    def _answer(self, request: Request, sent: Sent | None) -> Completion:
        started = time.perf_counter()
        try:
            asked, extra = self._plan(request)
            replies = [self._send(request, asked, request.seed, sent)]
            extra += self._note_missing(asked, len(replies[0].choices))
            for i in range(request.n - extra, request.n):
                replies.append(self._send(request, 1, self._seed(request, i), sent))
        except TableReasonError:
            raise
        except Exception as error:
            translated = translate_error(error, timeout=self.timeout)
            if translated is error:
                raise
            # the server's own error text may quote the key: keep it out of the chain
            raise translated from (None if carries_server_text(error) else error)
        return self._finish(request, replies, started, sent)

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
