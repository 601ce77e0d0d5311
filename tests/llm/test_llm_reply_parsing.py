"""Property tests of the reply reader, Retry-After parsing and key redaction."""

from __future__ import annotations

import contextlib
import json
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.llm.backends.server.replies import SeenReplies, decode, read_reply
from tablereason.llm.backends.server.status import (
    MAX_RETRY_AFTER_S,
    error_message,
    parse_retry_after,
)
from tablereason.llm.errors import DuplicateReplyError, MalformedReplyError
from tablereason.llm.redaction import REDACTED, redact, register_secret

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
KEYS = ("index", "message", "content", "text", "logprobs", "finish_reason", "usage", "tokens")
# JSON that looks like a reply more often than random JSON would
REPLYISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 3)
    | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from((*KEYS, "choices", "id", "model", "token")), inner)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(JSON, REPLYISH, st.fixed_dictionaries({"choices": REPLYISH})))
def test_any_json_reads_or_is_a_malformed_reply(data: object) -> None:
    for endpoint in ("chat", "completion"):
        try:
            reply = read_reply(data, endpoint)  # type: ignore[arg-type]
        except MalformedReplyError as error:
            assert str(error)
        else:
            assert reply.choices and all(isinstance(c.text, str) for c in reply.choices)
            assert reply.usage.prompt_tokens >= 0 and reply.usage.completion_tokens >= 0


@settings(max_examples=200, deadline=None)
@given(payload=st.binary(max_size=64))
def test_any_bytes_decode_or_are_a_malformed_reply(payload: bytes) -> None:
    with contextlib.suppress(MalformedReplyError):
        decode(payload)
    assert isinstance(error_message(payload), str)


def test_well_formed_replies_read_exactly() -> None:
    body = {
        "id": "x",
        "model": "m",
        "choices": [
            {"index": 1, "message": {"content": "two"}, "finish_reason": "length"},
            {"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": None},
        ],
        "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6},
    }
    reply = read_reply(json.loads(json.dumps(body)), "chat")
    assert [c.text for c in reply.choices] == ["", "two"]
    assert reply.choices[1].finish_reason == "length"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (4, 2)
    assert (reply.model, reply.id) == ("m", "x")


@settings(max_examples=300, deadline=None)
@given(value=st.text(max_size=40), ms=st.none() | st.text(max_size=12))
def test_retry_after_never_raises_and_stays_in_range(value: str, ms: str | None) -> None:
    headers = {"retry-after": value} if ms is None else {"retry-after": value, "retry-after-ms": ms}
    seconds = parse_retry_after(headers)
    assert seconds is None or 0.0 <= seconds <= MAX_RETRY_AFTER_S


@given(seconds=st.floats(min_value=0, max_value=MAX_RETRY_AFTER_S))
def test_retry_after_numbers_read_back(seconds: float) -> None:
    assert parse_retry_after({"retry-after": repr(seconds)}) == seconds


SECRET = st.text(string.ascii_letters + string.digits + "-_", min_size=8, max_size=40)


@settings(max_examples=200, deadline=None)
@given(secret=SECRET, before=st.text(max_size=30), after=st.text(max_size=30))
def test_a_registered_key_never_survives_redaction(secret: str, before: str, after: str) -> None:
    register_secret(secret)
    text = redact(f"{before}{secret}{after}")
    assert secret not in text and REDACTED in text


@given(key=st.text(string.ascii_letters + string.digits, min_size=20, max_size=48))
def test_key_shaped_strings_are_redacted_unregistered(key: str) -> None:
    assert f"sk-{key}" not in redact(f"invalid key sk-{key} given")
    assert key not in redact(f"Authorization: Bearer {key}")
    assert key not in redact(f'{{"api_key": "{key}"}}')


def test_ordinary_messages_are_left_alone() -> None:
    for text in ("HTTP 500: internal error", "rate limited; retry in 2s", "task-specific"):
        assert redact(text) == text


def test_seen_replies_catch_only_exact_repeats() -> None:
    seen = SeenReplies(size=2)
    seen.check("a", b"1")
    seen.check("a", b"2")  # same id, other bytes: a server that reuses ids
    seen.check(None, b"1")  # no id: not tracked
    try:
        seen.check("a", b"2")
    except DuplicateReplyError:
        pass
    else:
        raise AssertionError("an exact repeat was not caught")
    seen.check("b", b"3")
    seen.check("c", b"4")
    seen.check("a", b"1")  # forgotten after `size` newer replies
