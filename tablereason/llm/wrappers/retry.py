"""Retries with exponential backoff and jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM, Completion, Request
from tablereason.llm.errors import RetriesExhaustedError, TransientLLMError, is_retryable
from tablereason.llm.wrappers.base import LLMWrapper

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait between attempts.

    The n-th retry waits ``min(max_delay, base_delay * 2**n)`` scaled by a random factor
    in ``[1 - jitter, 1]``; when the server sent Retry-After, that wait is used instead
    (capped at ``max_retry_after``).

    Args:
        max_attempts: Attempts in all, the first included.
        base_delay: Seconds before the first retry.
        max_delay: Cap on one backoff wait.
        jitter: Fraction of the wait that is randomised (0 to 1).
        max_retry_after: Cap on a server-requested wait.

    Example:
        >>> RetryPolicy(base_delay=1.0, jitter=0.0).delay(2, retry_after=None)
        4.0
        >>> RetryPolicy().delay(0, retry_after=3.0)
        3.0
    """

    max_attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.5
    max_retry_after: float = 300.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigurationError("RetryPolicy.max_attempts must be at least 1")
        if not 0.0 <= self.jitter <= 1.0:
            raise ConfigurationError("RetryPolicy.jitter must be between 0 and 1")

    def delay(
        self, retry: int, retry_after: float | None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        backoff = min(self.max_delay, self.base_delay * 2**retry)
        factor = 1.0 - self.jitter * (rng or random).random()
        return backoff * factor


def _retry_after(error: BaseException) -> float | None:
    return error.retry_after if isinstance(error, TransientLLMError) else None


class RetryingLLM(LLMWrapper):
    """Retries transient failures of the wrapped model; everything else passes through.

    Retried: :class:`~tablereason.llm.errors.TransientLLMError` (rate limits, 5xx,
    timeouts, dropped connections, malformed replies) and the built-in ``TimeoutError``
    and ``ConnectionError``. Not retried: :class:`~tablereason.llm.errors.ContextLengthError`
    (shrink the prompt instead), budget and cache-miss errors, and other errors. When
    every attempt fails, :class:`~tablereason.llm.errors.RetriesExhaustedError` is raised
    from the last error.

    Args:
        inner: The model to wrap.
        policy: Backoff settings.
        sleep: Blocking sleep used between attempts (tests pass a fake).
        asleep: Async sleep used between attempts.
        seed: Seed of the jitter generator (for reproducible waits).

    Example:
        >>> from tablereason.llm.backends.scripted import ScriptedLLM
        >>> flaky = ScriptedLLM(replies=[TransientLLMError("busy", status=503), "ok"])
        >>> RetryingLLM(flaky, sleep=lambda s: None).complete(Request(prompt="hi")).text
        'ok'
    """

    def __init__(
        self,
        inner: LLM,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        asleep: Callable[[float], object] = asyncio.sleep,
        seed: int | None = None,
    ) -> None:
        super().__init__(inner)
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._asleep = asleep
        self._rng = random.Random(seed)
        self.retries = 0  # retries performed over the wrapper's lifetime

    def _next_wait(self, attempt: int, error: BaseException, request: Request) -> float:
        if attempt >= self.policy.max_attempts:
            raise RetriesExhaustedError(
                f"{self.name}/{self.model} failed {attempt} times "
                f"(call site {request.call_site!r}); last error: {error}. "
                "Check the server, lower the concurrency, or raise RetryPolicy.max_attempts.",
                attempts=attempt,
                last_error=error,
            ) from error
        wait = self.policy.delay(attempt - 1, _retry_after(error), self._rng)
        self.retries += 1
        log.info("retrying %s after %.2fs (attempt %d): %s", self.model, wait, attempt, error)
        return wait

    def complete(self, request: Request) -> Completion:
        """Answer one request, retrying transient failures."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return self.inner.complete(request)
            except Exception as error:
                if not is_retryable(error):
                    raise
                wait = self._next_wait(attempt, error, request)
            self._sleep(wait)

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self.inner.acomplete(request)
            except Exception as error:
                if not is_retryable(error):
                    raise
                wait = self._next_wait(attempt, error, request)
            result = self._asleep(wait)
            if asyncio.iscoroutine(result):
                await result
