"""Reading the replies of OpenAI-compatible servers, with their shape checked.

Both transports (the ``openai`` package and the lean JSON transport) hand the raw
body here. :func:`decode` turns it into JSON; :func:`read_reply` checks every field
the backends use and builds the choices. Anything not in the documented shape (a
message that is a bare string, choices that are strings, null text, counts that are
not numbers...) raises :class:`~tablereason.llm.errors.MalformedReplyError`, naming
the field, instead of an ``AttributeError`` from deep inside a backend.

:class:`SeenReplies` remembers the replies received on one connection, so that a
reply delivered twice is caught instead of being read as the answer to the next
request.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tablereason.llm.base import Choice, TokenLogprob, Usage
from tablereason.llm.errors import DuplicateReplyError, MalformedReplyError

Endpoint = Literal["chat", "completion"]


@dataclass(frozen=True)
class Reply:
    """One checked reply.

    Attributes:
        choices: The choices, in index order.
        usage: Tokens the server reported (zero when it reported none).
        model: The model the server named, if any.
        id: The reply's id, if any.
    """

    choices: tuple[Choice, ...]
    usage: Usage
    model: str | None = None
    id: str | None = None


def _malformed(what: str) -> MalformedReplyError:
    return MalformedReplyError(f"malformed reply from the server: {what}")


def decode(payload: bytes, object_hook: Callable[[dict[str, Any]], Any] | None = None) -> Any:
    """The JSON value of a reply body.

    Args:
        payload: The body.
        object_hook: Builds each JSON object (plain dicts by default).

    Raises:
        MalformedReplyError: Not UTF-8 JSON, or nested too deep to read.

    Example:
        >>> decode(b'{"a": 1}')
        {'a': 1}
    """
    try:
        return json.loads(payload, object_hook=object_hook)
    except RecursionError:
        raise _malformed("the JSON is nested too deeply to read") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        snippet = payload[:80].decode("utf-8", "replace")
        raise _malformed(f"not JSON ({error}); it starts {snippet!r}") from None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _malformed(f"{where} is {_kind(value)}, expected an object")
    return value


def _optional_str(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _malformed(f"{where} is {_kind(value)}, expected a string")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _malformed(f"{where} is {_kind(value)}, expected the text as a string")
    return value


def _count(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _malformed(f"{where} is {_kind(value)}, expected a whole number")
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise _malformed(f"{where} is {value!r}, expected a whole number of at least 0")
    return int(value)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise _malformed(f"{where} is {_kind(value)}, expected a number")
    return float(value)


def _index(value: Any, position: int, where: str) -> int:
    if value is None:
        return position
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _malformed(f"{where} is {value!r}, expected a choice number of at least 0")
    return value


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    usage = _object(raw, "usage")
    return Usage(
        prompt_tokens=_count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
        completion_tokens=_count(usage.get("completion_tokens"), "usage.completion_tokens"),
    )


def _chat_logprobs(raw: Any, where: str) -> tuple[TokenLogprob, ...] | None:
    if raw is None:
        return None
    content = _object(raw, where).get("content")
    if content is None:
        return None
    if not isinstance(content, list):
        raise _malformed(f"{where}.content is {_kind(content)}, expected a list")
    out = []
    for i, item in enumerate(content):
        entry = _object(item, f"{where}.content[{i}]")
        token = _text(entry.get("token"), f"{where}.content[{i}].token")
        out.append(TokenLogprob(token=token, logprob=_number(entry.get("logprob"), where)))
    return tuple(out) or None


def _completion_logprobs(raw: Any, where: str) -> tuple[TokenLogprob, ...] | None:
    if raw is None:
        return None
    logprobs = _object(raw, where)
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not tokens:
        return None
    if not isinstance(tokens, list) or not isinstance(values or [], list):
        raise _malformed(f"{where}.tokens and .token_logprobs must be lists")
    out = []
    for i, token in enumerate(tokens):
        value = values[i] if values and i < len(values) else None
        logprob = 0.0 if value is None else _number(value, f"{where}.token_logprobs[{i}]")
        out.append(TokenLogprob(token=_text(token, f"{where}.tokens[{i}]"), logprob=logprob))
    return tuple(out)


def _choice(raw: Any, endpoint: Endpoint, where: str) -> Choice:
    choice = _object(raw, where)
    finish = _optional_str(choice.get("finish_reason"), f"{where}.finish_reason")
    if endpoint == "chat":
        if "message" not in choice:
            raise _malformed(f"{where} has no message")
        message = _object(choice["message"], f"{where}.message")
        text = _text(message.get("content"), f"{where}.message.content")
        logprobs = _chat_logprobs(choice.get("logprobs"), f"{where}.logprobs")
    else:
        if "text" not in choice:
            raise _malformed(f"{where} has no text")
        text = _text(choice["text"], f"{where}.text")
        logprobs = _completion_logprobs(choice.get("logprobs"), f"{where}.logprobs")
    return Choice(text=text, logprobs=logprobs, finish_reason=finish)


def read_reply(data: Any, endpoint: Endpoint) -> Reply:
    """Check a decoded reply's shape and read its choices, usage, model and id.

    Args:
        data: The decoded JSON body.
        endpoint: ``"chat"`` (choices hold a ``message``) or ``"completion"``
            (choices hold ``text``).

    Raises:
        MalformedReplyError: The first field not in the documented shape.

    Example:
        >>> reply = read_reply({"choices": [{"message": {"content": "hi"}}]}, "chat")
        >>> reply.choices[0].text
        'hi'
        >>> read_reply({"choices": ["hi"]}, "chat")
        Traceback (most recent call last):
        ...
        tablereason.llm.errors.MalformedReplyError: malformed reply from the server: \
choices[0] is a string, expected an object
    """
    body = _object(data, "the reply")
    raw_choices = body.get("choices")
    if not raw_choices:
        error = body.get("error")
        if error is not None:
            detail = error.get("message") if isinstance(error, dict) else error
            raise _malformed(f"status 200 but an error in the body: {str(detail)[:300]}")
        if raw_choices is None:
            raise MalformedReplyError("the server replied without any choice (no `choices`)")
        if isinstance(raw_choices, list):
            raise MalformedReplyError("the server replied without any choice")
    if not isinstance(raw_choices, list):
        raise _malformed(f"choices is {_kind(raw_choices)}, expected a list")
    numbered: dict[int, Choice] = {}
    for position, raw in enumerate(raw_choices):
        where = f"choices[{position}]"
        choice = _choice(raw, endpoint, where)
        index = _index(raw.get("index"), position, f"{where}.index")
        if index in numbered:
            raise _malformed(f"two choices have the index {index}")
        numbered[index] = choice
    return Reply(
        choices=tuple(numbered[i] for i in sorted(numbered)),
        usage=_usage(body.get("usage")),
        model=_optional_str(body.get("model"), "model"),
        id=_optional_str(body.get("id"), "id"),
    )


class SeenReplies:
    """The last replies received on one connection, to catch one delivered twice.

    A reply counts as seen again when both its id and its exact bytes match an earlier
    one: servers that give every reply the same id (or none) are not mistaken for
    duplicates, since their replies to different prompts differ in content.

    Args:
        size: How many replies to remember.

    Example:
        >>> seen = SeenReplies()
        >>> seen.check("r1", b"{...}")
        >>> seen.check("r1", b"{...}")
        Traceback (most recent call last):
        ...
        tablereason.llm.errors.DuplicateReplyError: the server sent reply 'r1' a second \
time on the same connection (it would answer the wrong request); the connection was \
dropped and the request is retried
    """

    def __init__(self, size: int = 64) -> None:
        self._order: deque[tuple[str, bytes]] = deque(maxlen=size)
        self._keys: set[tuple[str, bytes]] = set()

    def check(self, reply_id: str | None, payload: bytes) -> None:
        """Record a reply; raise when the same reply was recorded before.

        Raises:
            DuplicateReplyError: The reply is a repeat.
        """
        if not reply_id:
            return
        key = (reply_id, hashlib.blake2b(payload, digest_size=16).digest())
        if key in self._keys:
            raise DuplicateReplyError(
                f"the server sent reply {reply_id[:80]!r} a second time on the same "
                "connection (it would answer the wrong request); the connection was "
                "dropped and the request is retried"
            )
        if len(self._order) == self._order.maxlen:
            self._keys.discard(self._order[0])
        self._order.append(key)
        self._keys.add(key)
