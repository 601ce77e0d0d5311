"""The one protocol every method uses to talk to a language model.

A backend implements :meth:`LLM.complete` (and optionally :meth:`LLM.acomplete`).
Requests and completions are plain pydantic values, so they hash, cache and
serialise the same way everywhere.
"""

from __future__ import annotations

import asyncio
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

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

    Example:
        >>> Request(prompt="2 + 2 =", max_tokens=4, stop=["\\n"]).n
        1
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


@runtime_checkable
class LLM(Protocol):
    """A language model backend.

    Backends set ``name`` (``"openai"``, ``"local"``, ``"scripted"``) and ``model``.
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
