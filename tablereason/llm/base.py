"""The one protocol every method uses to talk to a language model.

A backend implements :meth:`LLM.complete` (and optionally :meth:`LLM.acomplete`).
Requests and completions are plain pydantic values, so they hash, cache and
serialise the same way everywhere.

A request may carry a ``constraint`` (:mod:`tablereason.llm.constraints`): every backend
returns a completion whose choices satisfy it, or raises
:class:`~tablereason.llm.errors.ConstraintViolationError` (see docs/llm.md).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tablereason.llm.constraints.kinds import (
    KINDS,
    Constraint,
    Grammar,
    JSONSchema,
    Kind,
    OneOf,
    Regex,
)

__all__ = [
    "KINDS",
    "LLM",
    "NO_CAPABILITIES",
    "Capabilities",
    "Choice",
    "Completion",
    "Constraint",
    "Grammar",
    "JSONSchema",
    "Kind",
    "Message",
    "OneOf",
    "Regex",
    "Request",
    "Role",
    "SyncLLM",
    "TokenLogprob",
    "Usage",
    "capabilities_of",
]

Role = Literal["system", "user", "assistant"]


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


class Request(BaseModel):
    r"""What a method asks of a model: chat ``messages`` or a raw completion ``prompt``.

    ``call_site`` names who asked (``"chain_of_table/select_rows"``); it is used for
    usage accounting and never sent to the model or included in cache keys.
    ``constraint`` says what the reply (or its slot after a marker) must be; the backend
    sends it in the form its server understands and checks the reply.

    Fields added after ``logprobs`` enter cache keys only when they differ from their
    defaults (:func:`~tablereason.llm.wrappers.cache.cache_key`), so recorded caches
    keep replaying; give every new field a default.

    Example:
        >>> Request(prompt="2 + 2 =", max_tokens=4, stop=["\\n"]).n
        1
        >>> Request(prompt="Is it so? ", constraint=OneOf(options=("yes", "no"))).constraint.kind
        'choice'
    """

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...] | None = None
    prompt: str | None = None
    n: int = Field(default=1, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=256, ge=1)
    stop: tuple[str, ...] = ()
    seed: int | None = None
    logprobs: bool = False
    constraint: Constraint | None = None
    call_site: str = Field(default="", exclude=True)

    @model_validator(mode="after")
    def _one_input(self) -> Request:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("a Request needs exactly one of `messages` or `prompt`")
        return self

    def as_text(self) -> str:
        """The request as one prompt string (messages joined by role), for backends without chat."""
        if self.prompt is not None:
            return self.prompt
        assert self.messages is not None
        return "\n\n".join(m.content for m in self.messages)


class TokenLogprob(BaseModel):
    """One generated token and its log-probability."""

    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float


class Choice(BaseModel):
    """One generated alternative."""

    model_config = ConfigDict(frozen=True)

    text: str
    logprobs: tuple[TokenLogprob, ...] | None = None
    finish_reason: str | None = None


class Usage(BaseModel):
    """Token counts of one call (or a sum of calls)."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 1

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            requests=self.requests + other.requests,
        )


class Completion(BaseModel):
    """What came back: the choices, token usage, latency and who answered."""

    model_config = ConfigDict(frozen=True)

    choices: tuple[Choice, ...]
    usage: Usage = Usage()
    latency_s: float = 0.0
    backend: str = ""
    model: str = ""
    cached: bool = False

    @property
    def text(self) -> str:
        """Text of the first choice."""
        return self.choices[0].text if self.choices else ""

    @property
    def texts(self) -> list[str]:
        """Texts of all choices, in order."""
        return [c.text for c in self.choices]


@dataclass(frozen=True)
class Capabilities:
    """What a backend supports.

    Attributes:
        constraints: The constraint kinds it enforces while generating (all others are
            only checked after the call).
        after: It enforces a constraint on the slot after free text (``after=``) too.
        endpoints: For servers, the endpoints the constraint fields work on.
        n: It returns ``n`` choices in one call (otherwise asked one at a time).
        logprobs: It returns token log-probabilities.
        stop: It honours stop strings.
        seed: It honours a sampling seed.
    """

    constraints: frozenset[Kind] = frozenset()
    after: bool = False
    endpoints: tuple[str, ...] = ("chat", "completion")
    n: bool = True
    logprobs: bool = True
    stop: bool = True
    seed: bool = True

    def enforces(self, kind: str, *, after: bool = False, endpoint: str = "chat") -> bool:
        """Whether a constraint of ``kind`` is enforced on ``endpoint``.

        With ``after``: a constraint on the slot after free text.
        """
        enforced = kind in self.constraints and endpoint in self.endpoints
        return enforced and (self.after or not after)


NO_CAPABILITIES = Capabilities(n=False, logprobs=False, stop=False, seed=False)
"""What is assumed of an object that declares nothing."""


def capabilities_of(llm: object) -> Capabilities:
    """What a model (a backend, or a stack of wrappers around one) supports.

    A server backend's depend on its kind, detected on first use: asking may probe it.

    Example:
        >>> capabilities_of(object()) == NO_CAPABILITIES
        True
    """
    declared = getattr(llm, "capabilities", None)
    return declared if isinstance(declared, Capabilities) else NO_CAPABILITIES


@runtime_checkable
class LLM(Protocol):
    """A language model backend.

    Backends set ``name`` (``"openai"``, ``"local"``, ``"scripted"``) and ``model``, and
    may declare a ``capabilities`` property (:class:`Capabilities`; read it with
    :func:`capabilities_of`, which assumes nothing of a backend that declares nothing).
    """

    name: str
    model: str

    def complete(self, request: Request) -> Completion:
        """Answer one request."""
        ...

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        ...


class SyncLLM:
    """Base class for backends that only write :meth:`complete`.

    It provides :meth:`acomplete` by running :meth:`complete` in a worker thread.
    """

    name: str = "base"
    model: str = ""

    def complete(self, request: Request) -> Completion:  # pragma: no cover - abstract
        """Answer one request."""
        raise NotImplementedError

    async def acomplete(self, request: Request) -> Completion:
        """Run :meth:`complete` in a thread so the event loop stays free."""
        return await asyncio.to_thread(self.complete, request)
