"""Errors of the LLM layer.

All derive from :class:`tablereason.errors.LLMError`, so ``except LLMError`` catches
every model failure. Which ones are worth retrying is decided by :func:`is_retryable`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tablereason.errors import LLMError, TableReasonError
from tablereason.llm.redaction import redact

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.base import Completion


class TransientLLMError(LLMError):
    """A failure that may go away on its own: rate limit, server error, timeout, dropped link.

    The message is redacted (:func:`~tablereason.llm.redaction.redact`): server text
    quoting a key never reaches logs or traces.

    Args:
        message: What happened.
        status: HTTP status, when there was one.
        retry_after: Seconds the server asked us to wait, when it said so.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(redact(message))
        self.status = status
        self.retry_after = retry_after


class MalformedReplyError(TransientLLMError):
    """A reply with status 200 that is not what the API promises.

    Not JSON, not an object, no choices, a choice or message of the wrong type, text
    that is null, usage counts that are not numbers... The message names the first
    field found wrong. Retried like other transient failures: a server that sends one
    such reply usually sends a good one next.
    """


class ConstraintViolationError(MalformedReplyError):
    """A reply to a constrained request that does not satisfy its constraint.

    Raised after the call by every backend, whether or not the server was sent the
    constraint (see :mod:`tablereason.llm.backends.enforcement`). Not retried by
    :class:`~tablereason.llm.wrappers.retry.RetryingLLM`: the caller re-asks within its
    own bound (the reply is the model's, not the network's), reading the reply from
    ``completion``.

    Args:
        message: What was wrong.
        completion: The reply, as the backend read it.
        constraint: The constraint it breaks.
    """

    def __init__(self, message: str, *, completion: Completion, constraint: Any) -> None:
        super().__init__(message)
        self.completion = completion
        self.constraint = constraint


class ConstraintError(TableReasonError):
    """A constraint that cannot be built, converted or checked.

    A regular expression outside the supported subset, a grammar that does not parse or
    is left-recursive, a JSON schema that is not one, or a check that would take too
    long; the message names the construct. (Not a ``ValueError``, so that building a
    constraint raises it as it is rather than inside pydantic's ``ValidationError``.)
    """


class DuplicateReplyError(TransientLLMError):
    """The server delivered a reply already received on the same connection.

    Read as the answer to the next request, it would be attributed (and cached) under
    the wrong prompt. The connection is dropped and the request is retried on a fresh
    one.
    """


class ContextLengthError(LLMError, ValueError):
    """The prompt (plus ``max_tokens``) does not fit the model's context window.

    Not retried: shrink the table view or the demonstrations and ask again.
    """


class EmptyCompletionError(LLMError):
    """The server answered with no text at all.

    Seen with chat requests to a model without a chat template: use the completion
    endpoint or a chat-tuned model.
    """


class BudgetExceededError(LLMError):
    """A token or cost budget for the run is spent; no further requests are sent."""


class CacheMissError(LLMError, KeyError):
    """Offline replay found no recorded response for a request."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0]) if self.args else ""


class RetriesExhaustedError(LLMError):
    """Every attempt failed with a transient error; ``last_error`` holds the final one."""

    def __init__(self, message: str, *, attempts: int, last_error: BaseException) -> None:
        super().__init__(redact(message))
        self.attempts = attempts
        self.last_error = last_error


def is_retryable(error: BaseException) -> bool:
    """Whether an exception raised by a backend is worth another attempt.

    Args:
        error: The exception a backend raised.

    Returns:
        True for :class:`TransientLLMError` (except :class:`ConstraintViolationError`,
        which the caller re-asks) and the built-in ``TimeoutError`` and
        ``ConnectionError`` (which backends without HTTP may raise); False otherwise.

    Example:
        >>> is_retryable(TransientLLMError("429", status=429))
        True
        >>> is_retryable(ContextLengthError("too long"))
        False
    """
    if isinstance(error, ConstraintViolationError):
        return False
    return isinstance(error, (TransientLLMError, TimeoutError, ConnectionError))
