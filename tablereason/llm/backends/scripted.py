"""A scripted model for tests: replies from a queue or a function, every request recorded.

It enforces no constraint, but checks replies as every backend does: a scripted reply
that breaks its request's constraint raises
:class:`~tablereason.llm.errors.ConstraintViolationError`, as a server that ignores
constraints would.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from tablereason.errors import ConfigurationError, LLMError
from tablereason.llm.backends.enforcement import Enforcement
from tablereason.llm.backends.registry import BACKENDS
from tablereason.llm.base import Capabilities, Choice, Completion, Request, SyncLLM, Usage

Reply = str | Sequence[str] | BaseException
"""One scripted reply: a text (used for every one of the ``n`` choices), a list of
choice texts (returned as given), or an exception instance to raise."""


def _count_words(text: str) -> int:
    return len(text.split())


class ScriptedLLM(SyncLLM):
    """Answers from a list of replies or from a function of the request.

    Usage counts whitespace-separated words (prompt words, and words of every choice),
    so tests can check accounting exactly.

    Args:
        replies: Replies consumed in order, one per request. A reply may be an exception
            instance, which is raised instead (to script failures).
        fn: Alternatively, a function from the request to a reply.
        model: Model name to report.

    Example:
        >>> llm = ScriptedLLM(replies=["4", ["yes", "no"]])
        >>> llm.complete(Request(prompt="2 + 2 =")).text
        '4'
        >>> llm.complete(Request(prompt="ok?", n=2)).texts
        ['yes', 'no']
        >>> len(llm.requests)
        2
    """

    name = "scripted"

    def __init__(
        self,
        replies: Iterable[Reply] | None = None,
        *,
        fn: Callable[[Request], Reply] | None = None,
        model: str = "scripted",
    ) -> None:
        if (replies is None) == (fn is None):
            raise ConfigurationError("ScriptedLLM needs exactly one of `replies` or `fn`")
        self.model = model
        self._queue: deque[Reply] = deque(replies or [])
        self._fn = fn
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self.enforcement = Enforcement("the scripted model")

    @property
    def capabilities(self) -> Capabilities:
        """What it supports: ``n``; no constraint is enforced (replies are checked)."""
        return BACKENDS.get("scripted").capabilities

    @property
    def remaining(self) -> int:
        """Replies left in the queue (0 when scripted by a function)."""
        with self._lock:
            return len(self._queue)

    def complete(self, request: Request) -> Completion:
        """Record the request and return the next scripted reply.

        Raises:
            ConstraintViolationError: The reply breaks the request's constraint.
        """
        with self._lock:
            self.requests.append(request)
            if self._fn is None:
                if not self._queue:
                    raise LLMError(
                        f"ScriptedLLM ran out of replies at request {len(self.requests)} "
                        f"(call site {request.call_site!r}); add more replies to the script"
                    )
                reply = self._queue.popleft()
        if self._fn is not None:
            reply = self._fn(request)
        if isinstance(reply, BaseException):
            raise reply
        texts = [reply] * request.n if isinstance(reply, str) else list(reply)
        usage = Usage(
            prompt_tokens=_count_words(request.as_text()),
            completion_tokens=sum(_count_words(t) for t in texts),
        )
        completion = Completion(
            choices=tuple(Choice(text=t, finish_reason="stop") for t in texts),
            usage=usage,
            backend=self.name,
            model=self.model,
        )
        return self.enforcement.check(request, completion, sent=False)
