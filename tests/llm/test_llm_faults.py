"""Fault battery for the OpenAI-compatible client, on both transports.

A fake server on 127.0.0.1 sends what a server should not: 200 replies of the wrong
shape, unusable Retry-After values, bytes trickled past the timeout, one reply
delivered twice, error bodies that quote the key back. Every case runs through the
``openai`` package and through the lean JSON transport.
"""

from __future__ import annotations

import copy
import email.utils
import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.fake_server import FakeOpenAIServer, FakeSleep, Fault, reply_text

from tablereason.errors import LLMError
from tablereason.llm import (
    CachedLLM,
    OpenAIChat,
    OpenAICompletion,
    Request,
    RetriesExhaustedError,
    RetryingLLM,
    RetryPolicy,
    TransientLLMError,
)
from tablereason.llm.errors import DuplicateReplyError, MalformedReplyError

FAST = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0)


pytestmark = pytest.mark.usefixtures("transport")


# -- 200 replies of the wrong shape ---------------------------------------------------------

CHAT: dict[str, Any] = {
    "id": "r-1",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "fine"},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1},
}
COMPLETION: dict[str, Any] = {
    "id": "r-2",
    "object": "text_completion",
    "model": "m",
    "choices": [{"index": 0, "text": "fine", "finish_reason": "stop", "logprobs": None}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1},
}


def _set(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``base`` with the dotted ``path`` set to ``value`` (``...`` deletes it)."""
    reply = copy.deepcopy(base)
    *parents, last = path.split(".")
    node: Any = reply
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return reply


def chat(path: str, value: Any) -> dict[str, Any]:
    return _set(CHAT, path, value)


def completion(path: str, value: Any) -> dict[str, Any]:
    return _set(COMPLETION, path, value)


_GOOD = json.dumps(CHAT).encode()
SHAPES: dict[str, tuple[str, Any]] = {
    # the choices list
    "chat-message-bare-string": ("chat", chat("choices.0.message", "hi")),
    "chat-choices-strings": ("chat", chat("choices", ["hi", "there"])),
    "chat-choices-object": ("chat", chat("choices", {"0": CHAT["choices"][0]})),
    "chat-choices-string": ("chat", chat("choices", "hi")),
    "chat-choices-number": ("chat", chat("choices", 3)),
    "chat-choices-missing": ("chat", chat("choices", ...)),
    "chat-choices-null": ("chat", chat("choices", None)),
    "chat-choices-hold-null": ("chat", chat("choices", [None])),
    "chat-choices-hold-lists": ("chat", chat("choices", [["fine"]])),
    # the message
    "chat-message-missing": ("chat", chat("choices.0.message", ...)),
    "chat-message-null": ("chat", chat("choices.0.message", None)),
    "chat-message-list": ("chat", chat("choices.0.message", [{"content": "hi"}])),
    "chat-content-null": ("chat", chat("choices.0.message.content", None)),
    "chat-content-missing": ("chat", chat("choices.0.message.content", ...)),
    "chat-content-number": ("chat", chat("choices.0.message.content", 42)),
    "chat-content-bool": ("chat", chat("choices.0.message.content", True)),
    "chat-content-list": ("chat", chat("choices.0.message.content", [{"text": "hi"}])),
    "chat-content-object": ("chat", chat("choices.0.message.content", {"text": "hi"})),
    # other fields of a choice
    "chat-index-string": ("chat", chat("choices.0.index", "0")),
    "chat-index-negative": ("chat", chat("choices.0.index", -1)),
    "chat-index-fraction": ("chat", chat("choices.0.index", 0.5)),
    "chat-index-twice": ("chat", chat("choices", [CHAT["choices"][0]] * 2)),
    "chat-finish-reason-number": ("chat", chat("choices.0.finish_reason", 1)),
    "chat-logprobs-string": ("chat", chat("choices.0.logprobs", "low")),
    "chat-logprobs-content-string": ("chat", chat("choices.0.logprobs", {"content": "x"})),
    "chat-logprobs-token-missing": (
        "chat",
        chat("choices.0.logprobs", {"content": [{"logprob": -0.1}]}),
    ),
    "chat-logprobs-value-string": (
        "chat",
        chat("choices.0.logprobs", {"content": [{"token": "a", "logprob": "low"}]}),
    ),
    # usage, model, id
    "chat-usage-string": ("chat", chat("usage", "lots")),
    "chat-usage-list": ("chat", chat("usage", [1, 2])),
    "chat-usage-count-string": ("chat", chat("usage.prompt_tokens", "12")),
    "chat-usage-count-negative": ("chat", chat("usage.completion_tokens", -3)),
    "chat-usage-count-fraction": ("chat", chat("usage.prompt_tokens", 1.5)),
    "chat-usage-count-bool": ("chat", chat("usage.prompt_tokens", True)),
    "chat-usage-count-object": ("chat", chat("usage.completion_tokens", {"n": 1})),
    "chat-model-number": ("chat", chat("model", 7)),
    "chat-id-object": ("chat", chat("id", {"a": 1})),
    # the body as a whole
    "chat-error-in-200": ("chat", {"error": {"message": "model overloaded", "code": 503}}),
    "chat-error-string-in-200": ("chat", {"error": "upstream timed out"}),
    "chat-empty-object": ("chat", {}),
    "chat-body-list": ("chat", [CHAT]),
    "chat-body-string": ("chat", "fine"),
    "chat-body-null": ("chat", None),
    "chat-body-number": ("chat", 42),
    "chat-html": ("chat", b"<html><body>502 Bad Gateway</body></html>"),
    "chat-empty-body": ("chat", b""),
    "chat-deep-nesting": ("chat", b"[" * 100_000 + b"]" * 100_000),
    "chat-not-utf8": ("chat", b'\xff\xfe{"choices": []}'),
    "chat-cut-json": ("chat", _GOOD[:-7]),
    "chat-trailing-junk": ("chat", _GOOD + b" and more"),
    # the completion endpoint
    "completion-choices-strings": ("completion", completion("choices", ["fine"])),
    "completion-text-null": ("completion", completion("choices.0.text", None)),
    "completion-text-number": ("completion", completion("choices.0.text", 3)),
    "completion-text-missing": ("completion", completion("choices.0.text", ...)),
    "completion-text-list": ("completion", completion("choices.0.text", ["fine"])),
    "completion-chat-shaped": ("completion", CHAT),
    "completion-logprobs-string": ("completion", completion("choices.0.logprobs", "x")),
    "completion-logprobs-tokens-string": (
        "completion",
        completion("choices.0.logprobs", {"tokens": "ab", "token_logprobs": [-1.0]}),
    ),
    "completion-logprobs-value-string": (
        "completion",
        completion("choices.0.logprobs", {"tokens": ["a"], "token_logprobs": ["low"]}),
    ),
    "completion-usage-string": ("completion", completion("usage", "some")),
}


def _backend(endpoint: str, url: str, **kwargs: Any) -> OpenAIChat | OpenAICompletion:
    cls = OpenAIChat if endpoint == "chat" else OpenAICompletion
    return cls("m", base_url=url, timeout=5, **kwargs)


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_a_wrong_shape_is_a_malformed_reply_and_is_retried(
    server: FakeOpenAIServer, case: str, fake_sleep: FakeSleep
) -> None:
    endpoint, body = SHAPES[case]
    bare = _backend(endpoint, server.url)
    server.inject(Fault("reply", body=body))
    with pytest.raises(MalformedReplyError) as info:
        bare.complete(Request(prompt="question"))
    message = str(info.value)
    assert "malformed reply" in message or "without any choice" in message
    assert isinstance(info.value, TransientLLMError)  # so it is retried
    # a retrying model gets the next, well-formed reply (the same bad body under another
    # id: the same bytes again on the connection would be a reply delivered twice)
    fresh = isinstance(body, dict) and isinstance(body.get("id"), str)
    again = {**body, "id": "r-again"} if fresh else body
    server.inject(Fault("reply", body=again))
    llm = RetryingLLM(bare, FAST, sleep=fake_sleep)
    assert llm.complete(Request(prompt="question")).text == reply_text("question", None, 0)
    assert llm.retries == 1


def test_the_message_names_the_field_that_is_wrong(server: FakeOpenAIServer) -> None:
    server.inject(Fault("reply", body=SHAPES["chat-message-bare-string"][1]))
    with pytest.raises(MalformedReplyError, match=r"choices\[0\]\.message is a string"):
        OpenAIChat("m", base_url=server.url).complete(Request(prompt="q"))
    server.inject(Fault("reply", body=SHAPES["chat-usage-count-string"][1]))
    with pytest.raises(MalformedReplyError, match=r"usage\.prompt_tokens is a string"):
        OpenAIChat("m", base_url=server.url).complete(Request(prompt="q"))
    server.inject(Fault("reply", body=SHAPES["chat-error-in-200"][1]))
    with pytest.raises(MalformedReplyError, match="model overloaded"):
        OpenAIChat("m", base_url=server.url).complete(Request(prompt="q"))


def test_well_formed_variants_still_read(server: FakeOpenAIServer) -> None:
    """Fields that may be absent or null are not mistaken for a wrong shape."""
    llm = OpenAIChat("m", base_url=server.url)
    swapped = {
        "choices": [
            {"message": {"content": "b"}, "index": 1},
            {"message": {"content": "a"}, "index": 0},
        ]
    }
    server.inject(Fault("reply", body=swapped))
    out = llm.complete(Request(prompt="q", n=2))
    assert out.texts == ["a", "b"]  # in index order
    assert out.usage.prompt_tokens == 0 and out.model == "m"  # no usage, no model
    server.inject(Fault("reply", body={"choices": [{"message": {"content": "x"}}]}))
    assert llm.complete(Request(prompt="q")).text == "x"  # no index, no id
    floats = chat("usage", {"prompt_tokens": 3.0, "completion_tokens": None})
    server.inject(Fault("reply", body=floats))
    assert llm.complete(Request(prompt="q")).usage.prompt_tokens == 3
    logprobs = chat("choices.0.logprobs", {"content": [{"token": "f", "logprob": -0.5}]})
    server.inject(Fault("reply", body=logprobs))
    out = OpenAIChat("m", base_url=server.url).complete(Request(prompt="q", logprobs=True))
    assert out.choices[0].logprobs is not None and out.choices[0].logprobs[0].logprob == -0.5


# -- Retry-After that does not parse, or is huge --------------------------------------------


def _http_date(offset_s: float) -> str:
    return email.utils.formatdate(time.time() + offset_s, usegmt=True)


RETRY_AFTER: dict[str, tuple[dict[str, str], float | None]] = {
    "word": ({"Retry-After": "soon"}, None),
    "negative": ({"Retry-After": "-5"}, None),
    "nan": ({"Retry-After": "nan"}, None),
    "empty": ({"Retry-After": ""}, None),
    "broken-date": ({"Retry-After": "Mon, 99 Foo 2024 25:61:00 GMT"}, None),
    "huge": ({"Retry-After": "1e12"}, 3600.0),
    "infinite": ({"Retry-After": "inf"}, 3600.0),
    "past-date": ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    "fraction": ({"Retry-After": "2.5"}, 2.5),
    "padded": ({"Retry-After": "  7 "}, 7.0),
    "ms-garbage-falls-back": ({"Retry-After": "2", "retry-after-ms": "abc"}, 2.0),
    "ms-negative-falls-back": ({"Retry-After": "3", "retry-after-ms": "-100"}, 3.0),
    "ms": ({"Retry-After": "9", "retry-after-ms": "250"}, 0.25),
}


@pytest.mark.parametrize("case", sorted(RETRY_AFTER))
def test_retry_after_unparseable_is_absent_and_huge_is_capped(
    server: FakeOpenAIServer, case: str, fake_sleep: FakeSleep
) -> None:
    headers, expected = dict(RETRY_AFTER[case][0]), RETRY_AFTER[case][1]
    retry_after = headers.pop("Retry-After")
    fault = Fault("429", retry_after=retry_after, headers=headers)
    bare = OpenAIChat("m", base_url=server.url, timeout=5)
    server.inject(fault)
    with pytest.raises(TransientLLMError) as info:
        bare.complete(Request(prompt="q"))
    assert info.value.status == 429
    assert info.value.retry_after == expected
    policy = RetryPolicy(max_attempts=3, base_delay=0.5, jitter=0.0, max_retry_after=300.0)
    server.inject(fault)
    llm = RetryingLLM(bare, policy, sleep=fake_sleep)
    assert llm.complete(Request(prompt="q")).text == reply_text("q", None, 0)
    # absent: the policy's backoff; huge: the policy's cap
    assert fake_sleep.waits == [0.5 if expected is None else min(expected, 300.0)]


def test_retry_after_as_a_future_date(server: FakeOpenAIServer) -> None:
    server.inject(Fault("429", retry_after=_http_date(30)))
    with pytest.raises(TransientLLMError) as info:
        OpenAIChat("m", base_url=server.url).complete(Request(prompt="q"))
    assert info.value.retry_after is not None and 25 <= info.value.retry_after <= 31


# -- the whole-request deadline -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["trickle", "trickle_body"])
@pytest.mark.parametrize("endpoint", ["chat", "completion"])
def test_a_trickling_server_cannot_hold_a_call_past_the_timeout(
    server: FakeOpenAIServer, kind: str, endpoint: str
) -> None:
    cls = OpenAIChat if endpoint == "chat" else OpenAICompletion
    llm = cls("m", base_url=server.url, timeout=1.0)
    server.inject(Fault(kind, 0.1))  # ~300 bytes: 30 s if only each read were bounded
    started = time.monotonic()
    with pytest.raises(TransientLLMError, match="timeout"):
        llm.complete(Request(prompt="q"))
    assert time.monotonic() - started < 1.0 + 0.8
    # the connection was replaced: the next request is answered
    assert llm.complete(Request(prompt="next")).text == reply_text("next", None, 0)


def test_the_deadline_holds_for_async_calls(server: FakeOpenAIServer) -> None:
    import asyncio

    llm = OpenAIChat("m", base_url=server.url, timeout=1.0)
    server.inject(Fault("trickle", 0.1))
    started = time.monotonic()
    with pytest.raises(TransientLLMError, match="timeout"):
        asyncio.run(llm.acomplete(Request(prompt="q")))
    assert time.monotonic() - started < 1.8


def test_a_slow_but_timely_reply_is_not_cut(server: FakeOpenAIServer) -> None:
    llm = OpenAIChat("m", base_url=server.url, timeout=3.0)
    server.inject(Fault("trickle_body", 0.002), Fault("slow", 0.5))
    assert llm.complete(Request(prompt="a")).text == reply_text("a", None, 0)
    assert llm.complete(Request(prompt="b")).text == reply_text("b", None, 0)


# -- one reply delivered twice --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dup", "dup_next"])
@pytest.mark.parametrize("endpoint", ["chat", "completion"])
def test_a_reply_delivered_twice_never_answers_the_next_prompt(
    server: FakeOpenAIServer, kind: str, endpoint: str, tmp_path: Path
) -> None:
    bare = _backend(endpoint, server.url)
    cached = CachedLLM(RetryingLLM(bare, FAST), tmp_path / "cache.sqlite")
    prompts = [f"prompt {i}" for i in range(5)]
    server.inject(Fault(kind))
    answers = [cached.complete(Request(prompt=p)).text for p in prompts]
    assert answers == [reply_text(p, None, 0) for p in prompts]
    # what the cache holds under each prompt is that prompt's answer
    replay = CachedLLM(RetryingLLM(bare, FAST), tmp_path / "cache.sqlite", offline=True)
    assert [replay.complete(Request(prompt=p)).text for p in prompts] == answers


@pytest.mark.parametrize("kind", ["dup", "dup_next"])
@pytest.mark.parametrize("endpoint", ["chat", "completion"])
def test_the_bare_backend_sends_again_rather_than_misattribute_the_repeat(
    server: FakeOpenAIServer, kind: str, endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    llm = _backend(endpoint, server.url)  # no retry layer: the backend itself re-sends
    server.inject(Fault(kind))
    assert llm.complete(Request(prompt="first")).text == reply_text("first", None, 0)
    with caplog.at_level("INFO", logger="tablereason.llm.backends.server.client"):
        assert llm.complete(Request(prompt="second")).text == reply_text("second", None, 0)
    assert llm.complete(Request(prompt="third")).text == reply_text("third", None, 0)
    if kind == "dup_next":  # the repeat was read, refused, and the request sent once more
        assert server.counts.received == 4
        assert any("second time" in r.getMessage() for r in caplog.records)


def test_the_request_is_sent_again_once_only(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = OpenAIChat("m", base_url=server.url, timeout=5)
    sent: list[dict[str, Any]] = []

    def always_a_repeat(body: dict[str, Any], extra: dict[str, Any]) -> Any:
        sent.append(body)
        raise DuplicateReplyError("the server sent reply 'r' a second time")

    monkeypatch.setattr(llm, "_round_trip", always_a_repeat)
    with pytest.raises(DuplicateReplyError, match="second time"):
        llm.complete(Request(prompt="q"))
    assert len(sent) == 2  # the request, and once more on a fresh connection


def test_servers_that_reuse_one_id_are_not_taken_for_repeats() -> None:
    with FakeOpenAIServer(reply_id="chatcmpl-same") as server:
        llm = OpenAIChat("m", base_url=server.url)
        prompts = [f"p{i}" for i in range(8)]
        assert [llm.complete(Request(prompt=p)).text for p in prompts] == [
            reply_text(p, None, 0) for p in prompts
        ]
        assert server.counts.received == len(prompts)  # nothing was sent twice
        # a true repeat is still caught (same id and the same bytes) and sent again
        server.inject(Fault("dup_next"))
        llm.complete(Request(prompt="x"))
        assert llm.complete(Request(prompt="y")).text == reply_text("y", None, 0)
        assert server.counts.received == len(prompts) + 3


# -- keys quoted back by the server ---------------------------------------------------------

KEY = "sk-test-0123456789abcdefSECRET"
PLAIN_KEY = "local-server-token-ABCDEFGH-42"


def _quoting(key: str) -> dict[str, Fault]:
    said = f"Incorrect API key provided: {key}. Find yours at the dashboard."
    error = {"error": {"message": said, "type": "invalid_request_error"}}
    return {
        "401": Fault("reply", status=401, body=error),
        "403-bearer": Fault(
            "reply", status=403, body={"error": {"message": f"token Bearer {key} revoked"}}
        ),
        "429": Fault("reply", status=429, body=error, headers={"Retry-After": "0"}),
        "500": Fault("reply", status=500, body=error),
        "400-context": Fault(
            "reply",
            status=400,
            body={"error": {"message": f"maximum context length exceeded for key {key}"}},
        ),
        "200-error": Fault("reply", body=error),
        "200-not-json": Fault("reply", body=f"<p>{said}</p>".encode()),
        "422-plain-text": Fault("reply", status=422, body=f"bad key {key}".encode()),
    }


def _chain(error: BaseException | None) -> list[BaseException]:
    """The error and every error it was raised from or while handling."""
    out: list[BaseException] = []
    while error is not None and all(error is not seen for seen in out):
        out.append(error)
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    return out


@pytest.mark.parametrize("key", [KEY, PLAIN_KEY])
@pytest.mark.parametrize("case", sorted(_quoting("k")))
def test_a_key_quoted_back_is_redacted_from_the_error(
    server: FakeOpenAIServer, case: str, key: str
) -> None:
    llm = RetryingLLM(OpenAIChat("m", base_url=server.url, api_key=key, timeout=5), FAST)
    server.inject(*[_quoting(key)[case]] * FAST.max_attempts)
    with pytest.raises(LLMError) as info:
        llm.complete(Request(prompt="q"))
    for error in _chain(info.value):
        assert key not in str(error), type(error)
        if isinstance(error, RetriesExhaustedError):
            assert key not in str(error.last_error)
    assert "[redacted]" in str(info.value)
