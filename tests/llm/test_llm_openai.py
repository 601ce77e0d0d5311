"""OpenAIChat / OpenAICompletion against the fake server, faults included."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from support.fake_server import FakeOpenAIServer, FakeSleep, Fault, reply_text

from tablereason.errors import ConfigurationError
from tablereason.llm import (
    ContextLengthError,
    EmptyCompletionError,
    Message,
    OpenAIChat,
    OpenAICompletion,
    Request,
    RetriesExhaustedError,
    RetryingLLM,
    RetryPolicy,
    TransientLLMError,
    UsageTracker,
)
from tablereason.llm.backends.server.status import parse_retry_after

FAST = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0)


pytestmark = pytest.mark.usefixtures("transport")


def test_chat_sends_messages_and_options(server: FakeOpenAIServer) -> None:
    llm = OpenAIChat("m1", base_url=server.url)
    req = Request(
        messages=(Message(role="system", content="be brief"), Message(role="user", content="hi")),
        temperature=0.5,
        top_p=0.9,
        max_tokens=7,
        stop=("\n",),
        seed=3,
        call_site="t/x",
    )
    out = llm.complete(req)
    body = server.bodies[-1]
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.5, 0.9, 7)
    assert body["stop"] == ["\n"] and body["seed"] == 3 and "n" not in body
    assert "call_site" not in body
    assert out.text == reply_text("be brief\n\nhi", 3, 0)
    assert out.usage.prompt_tokens == 3 and out.usage.completion_tokens == 4
    assert (out.backend, out.model) == ("openai", "m1")
    assert out.latency_s > 0


def test_completion_endpoint_uses_raw_prompt(server: FakeOpenAIServer) -> None:
    llm = OpenAICompletion("m2", base_url=server.url)
    out = llm.complete(Request(prompt="a b c", n=3))
    assert server.bodies[-1]["prompt"] == "a b c" and server.bodies[-1]["n"] == 3
    assert out.texts == [reply_text("a b c", None, i) for i in range(3)]
    assert server.counts.received == 1


def test_ignored_n_is_filled_by_separate_requests() -> None:
    with FakeOpenAIServer(ignore_n=True) as server:
        llm = OpenAICompletion("m", base_url=server.url)
        out = llm.complete(Request(prompt="q", n=3, seed=10, temperature=0.7))
        assert len(out.choices) == 3
        # first call asked n=3 and got one choice; the two missing ones used seeds 11, 12
        assert [b.get("seed") for b in server.bodies] == [10, 11, 12]
        assert out.texts == [reply_text("q", s, 0) for s in (10, 11, 12)]
        assert out.usage.completion_tokens == 12 and out.usage.prompt_tokens == 3
        assert llm.supports_n is False
        llm.complete(Request(prompt="q", n=2, seed=1))  # now one at a time from the start
        assert [b.get("n") for b in server.bodies[3:]] == [None, None]


def test_async_fills_ignored_n() -> None:
    with FakeOpenAIServer(ignore_n=True) as server:
        llm = OpenAIChat("m", base_url=server.url)
        out = asyncio.run(llm.acomplete(Request(prompt="q", n=4, seed=0, temperature=1.0)))
        assert len(set(out.texts)) == 4 and server.counts.received == 4


def test_empty_chat_completion_is_an_error() -> None:
    with FakeOpenAIServer(empty_chat=True) as server:
        with pytest.raises(EmptyCompletionError, match="OpenAICompletion"):
            OpenAIChat("m", base_url=server.url).complete(Request(prompt="hi"))
        # the completion endpoint of the same server works
        assert OpenAICompletion("m", base_url=server.url).complete(Request(prompt="hi")).text
        allowed = OpenAIChat("m", base_url=server.url, allow_empty=True)
        assert allowed.complete(Request(prompt="hi")).texts == [""]


@pytest.mark.parametrize("kind", ["429", "500", "truncate", "badjson", "reset", "nochoices"])
def test_each_fault_surfaces_as_transient_and_is_retried(
    server: FakeOpenAIServer, kind: str, fake_sleep: FakeSleep
) -> None:
    bare = OpenAIChat("m", base_url=server.url, timeout=5)
    server.inject(Fault(kind, 0.25))
    with pytest.raises(TransientLLMError):
        bare.complete(Request(prompt="x"))
    server.inject(Fault(kind, 0.25), Fault(kind, 0.25))
    llm = RetryingLLM(bare, FAST, sleep=fake_sleep)
    out = llm.complete(Request(prompt="x y"))
    assert out.text == reply_text("x y", None, 0)
    assert llm.retries == 2


def test_retry_after_is_honoured(server: FakeOpenAIServer, fake_sleep: FakeSleep) -> None:
    server.inject(Fault("429", 1.5))
    llm = RetryingLLM(OpenAIChat("m", base_url=server.url), FAST, sleep=fake_sleep)
    llm.complete(Request(prompt="x"))
    assert fake_sleep.waits == [1.5]


def test_slow_reply_times_out_then_retry_succeeds(server: FakeOpenAIServer) -> None:
    server.inject(Fault("slow", 2.0))
    bare = OpenAIChat("m", base_url=server.url, timeout=0.3)
    with pytest.raises(TransientLLMError, match="timeout"):
        bare.complete(Request(prompt="x"))
    server.inject(Fault("slow", 2.0))
    out = RetryingLLM(bare, FAST).complete(Request(prompt="x"))
    assert out.text and server.counts.received == 3


def test_context_length_is_not_retried(server: FakeOpenAIServer) -> None:
    server.inject("context")
    llm = RetryingLLM(OpenAIChat("m", base_url=server.url), FAST)
    with pytest.raises(ContextLengthError, match="shrink"):
        llm.complete(Request(prompt="x"))
    assert server.counts.received == 1 and llm.retries == 0


def test_persistent_failure_exhausts_retries(server: FakeOpenAIServer) -> None:
    server.inject(*["500"] * 4)
    llm = RetryingLLM(OpenAIChat("m", base_url=server.url), FAST)
    with pytest.raises(RetriesExhaustedError) as info:
        llm.complete(Request(prompt="x", call_site="m/step"))
    assert info.value.attempts == 4 and "m/step" in str(info.value)
    assert isinstance(info.value.last_error, TransientLLMError)


def test_connection_refused_is_transient() -> None:
    with FakeOpenAIServer() as s:
        url = s.url
    with pytest.raises(TransientLLMError, match="connection"):
        OpenAIChat("m", base_url=url, timeout=2).complete(Request(prompt="x"))


def test_missing_credentials_say_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIChat("m").complete(Request(prompt="x"))


def test_random_faults_under_concurrency_are_not_double_counted() -> None:
    with FakeOpenAIServer(fault_rate=0.3, seed=7) as server:
        tracker = UsageTracker()
        llm = tracker.wrap(
            RetryingLLM(
                OpenAIChat("m", base_url=server.url, timeout=5),
                RetryPolicy(max_attempts=10, base_delay=0.001),
            )
        )
        requests = [Request(prompt=f"question {i} words", call_site="t") for i in range(60)]
        with ThreadPoolExecutor(8) as pool:
            outs = list(pool.map(llm.complete, requests))
        assert [o.text for o in outs] == [reply_text(r.prompt or "", None, 0) for r in requests]
        assert len(server.faults_applied) > 5  # faults really happened
        total = tracker.total()
        assert total.requests == 60 == server.counts.replies
        assert total.prompt_tokens == server.counts.prompt_tokens == 60 * 3
        assert total.completion_tokens == server.counts.completion_tokens


def test_async_retry_and_usage(server: FakeOpenAIServer) -> None:
    server.inject("500", "reset")
    tracker = UsageTracker()
    llm = tracker.wrap(RetryingLLM(OpenAIChat("m", base_url=server.url), FAST))

    async def main() -> list[str]:
        outs = await asyncio.gather(*(llm.acomplete(Request(prompt=f"p{i}")) for i in range(5)))
        return [o.text for o in outs]

    assert asyncio.run(main()) == [reply_text(f"p{i}", None, 0) for i in range(5)]
    assert tracker.total().requests == 5 == server.counts.replies


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0


def test_transports_are_really_used(server: FakeOpenAIServer, transport: str) -> None:
    llm = OpenAIChat("m", base_url=server.url)
    assert llm.transport == transport
    llm.complete(Request(prompt="x"))
    assert (llm._client is None) == (transport == "http")
    assert (llm._transport is None) == (transport == "openai")
