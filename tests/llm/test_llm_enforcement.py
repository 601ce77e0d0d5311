"""Fail closed, in process: every constrained reply is checked, and a broken one is a typed error.

The scripted model enforces nothing, so it shows what any backend does with a reply that
breaks its constraint: :class:`ConstraintViolationError` (carrying the reply), not retried
behind the caller's back, not cached, counted in usage.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from tablereason.llm import (
    CachedLLM,
    Choice,
    Completion,
    ConstraintViolationError,
    JSONSchema,
    MalformedReplyError,
    OneOf,
    Regex,
    Request,
    RetryingLLM,
    RetryPolicy,
    ScriptedLLM,
    UsageTracker,
    is_retryable,
    stack,
)
from tablereason.llm.backends.enforcement import Enforcement

YES_NO = OneOf(options=("yes", "no"), after="Answer: ")


def test_a_reply_that_meets_its_constraint_comes_back_as_it_is() -> None:
    llm = ScriptedLLM(replies=["Row 3 says so. Answer: yes"])
    assert llm.complete(Request(prompt="q", constraint=YES_NO)).text.endswith("yes")
    assert llm.enforcement.stats().checked == 1


def test_a_reply_that_breaks_it_is_a_typed_error_carrying_the_reply() -> None:
    llm = ScriptedLLM(replies=["Answer: perhaps"])
    with pytest.raises(ConstraintViolationError) as info:
        llm.complete(Request(prompt="q", constraint=YES_NO))
    error = info.value
    assert isinstance(error, MalformedReplyError)  # a malformed reply, of a kind of its own
    assert error.completion.text == "Answer: perhaps" and error.constraint == YES_NO
    assert "one of ['yes', 'no'] after 'Answer: '" in str(error)
    assert not is_retryable(error)  # the caller re-asks; the retry layer does not


def test_it_is_not_retried_not_cached_and_counted(tmp_path: Path) -> None:
    scripted = ScriptedLLM(replies=["Answer: maybe", "Answer: no"])
    tracker = UsageTracker()
    llm = stack(scripted, cache=tmp_path / "c.sqlite", tracker=tracker)
    request = Request(prompt="is it?", constraint=YES_NO, call_site="demo/verdict")
    with pytest.raises(ConstraintViolationError):
        llm.complete(request)
    assert len(scripted.requests) == 1  # no retry
    assert llm.complete(request).text == "Answer: no"  # the re-ask reached the model
    assert len(scripted.requests) == 2  # the broken reply is recorded, as its own entry
    total = tracker.total()
    assert (total.requests, total.malformed) == (2, 1)
    assert tracker.by_call_site()["demo/verdict"].malformed == 1
    assert total.completion_tokens == 4  # the broken reply's tokens were spent all the same


def test_the_async_path_counts_it_too() -> None:
    tracker = UsageTracker()
    llm = tracker.wrap(ScriptedLLM(replies=["nope"]))
    with pytest.raises(ConstraintViolationError):
        asyncio.run(llm.acomplete(Request(prompt="q", constraint=OneOf(options=("a",)))))
    assert tracker.total().malformed == 1


def test_every_choice_is_checked() -> None:
    llm = ScriptedLLM(replies=[["Answer: yes", "Answer: no"], ["Answer: yes", "Answer: 7"]])
    request = Request(prompt="q", n=2, temperature=1.0, constraint=YES_NO)
    assert llm.complete(request).texts == ["Answer: yes", "Answer: no"]
    with pytest.raises(ConstraintViolationError, match="reply 1 breaks"):
        llm.complete(request)


def test_a_retry_policy_does_not_swallow_it() -> None:
    scripted = ScriptedLLM(replies=["x", "y"])
    llm = RetryingLLM(scripted, RetryPolicy(max_attempts=3), sleep=lambda s: None)
    with pytest.raises(ConstraintViolationError):
        llm.complete(Request(prompt="q", constraint=Regex(pattern="[0-9]+")))
    assert llm.retries == 0 and scripted.remaining == 1


def test_unconstrained_requests_are_not_checked() -> None:
    llm = ScriptedLLM(replies=["anything"])
    assert llm.complete(Request(prompt="q")).text == "anything"
    assert llm.enforcement.stats().checked == 0


def test_trust_is_lost_only_for_a_reply_the_constraint_never_allowed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = Enforcement("the test server")
    schema = JSONSchema(json_schema={"type": "object", "required": ["a"]})
    request = Request(prompt="q", constraint=schema)

    def reply(text: str, finish: str = "stop") -> Completion:
        return Completion(choices=(Choice(text=text, finish_reason=finish),))

    with pytest.raises(ConstraintViolationError, match="cut short"):
        gate.check(request, reply('{"a": [1, 2', "length"), sent=True)
    assert gate.trusted  # cut by the token limit: the server did constrain it
    with pytest.raises(ConstraintViolationError):
        gate.check(request, reply("Sure, here you go"), sent=False)
    assert gate.trusted  # not sent: nothing to blame the server for
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            with pytest.raises(ConstraintViolationError):
                gate.check(request, reply("Sure, here you go"), sent=True)
    assert not gate.trusted and not gate.will_send(request)
    assert len([r for r in caplog.records if "not trusted" in r.getMessage()]) == 1
    assert gate.stats().violations == 4 and gate.stats().sent == 3


def test_a_violation_is_recorded_and_replays_as_the_same_violation(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    request = Request(prompt="q", constraint=OneOf(options=("good",)))
    online = CachedLLM(ScriptedLLM(replies=["bad", "good"]), path)
    with pytest.raises(ConstraintViolationError):
        online.complete(request)
    assert online.complete(request).text == "good"  # the identical re-ask: the next entry
    assert online.stats().entries == 2
    offline = CachedLLM(ScriptedLLM(replies=[]), path, offline=True)
    with pytest.raises(ConstraintViolationError, match="'bad'"):
        offline.complete(request)
    assert offline.complete(request).text == "good"
