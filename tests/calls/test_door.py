"""The one model-call door: what it sends, how it re-asks, what it writes into the step."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.dialect_servers import DialectServer
from support.fake_server import reply_text

from tablereason.calls import Door, ReplySpec, prompt_text
from tablereason.errors import LLMError, ParseError
from tablereason.llm import Capabilities, OneOf, OpenAICompletion, ScriptedLLM, UnconstrainedLLM
from tablereason.llm.base import Request
from tablereason.trace import Trace, TraceStep

YES_NO = OneOf(options=("yes", "no"))


class Enforcing(ScriptedLLM):
    """A scripted model that claims to enforce every kind, and (like a server that ignores
    constraints) answers as scripted: replies that break the constraint are caught."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            constraints=frozenset({"choice", "regex", "json", "grammar"}), after=True
        )


def verdict(text: str) -> str:
    word = text.strip().lower()
    if word not in ("yes", "no"):
        raise ParseError("not yes or no", raw=text, expected="yes or no")
    return word


def step() -> TraceStep:
    return TraceStep(kind="answer", name="verdict")


def test_a_reply_that_does_not_parse_is_re_asked_within_the_bound_and_counted() -> None:
    llm = ScriptedLLM(replies=["maybe", "perhaps", " yes"])
    s = step()
    reply = Door(llm, site="demo").ask(s, "Is it?", ReplySpec(parse=verdict, reasks=2))
    assert reply.value == "yes" and reply.requests == 3
    assert (s.reasks, s.unparsed, s.violations) == (2, 2, 0)
    assert s.raw == ["maybe", "perhaps", " yes"] and s.usage.requests == 3
    assert s.prompts[0] == "Is it?" and s.prompts[1].startswith("Is it?maybe\n\nThat reply")
    assert s.error is None and s.note and s.note.startswith("parsed after 2 re-ask(s)")
    assert [r.call_site for r in llm.requests] == ["demo/verdict"] * 3


def test_when_no_reply_parses_the_value_is_none_and_the_step_says_why() -> None:
    s = step()
    reply = Door(ScriptedLLM(replies=["a", "b"]), site="d").ask(
        s, "?", ReplySpec(parse=verdict, reasks=1)
    )
    assert reply.value is None and reply.text == "b"
    assert s.error == "not yes or no (expected: yes or no)" and s.unparsed == 2


def test_a_broken_constraint_is_re_asked_counted_and_then_read_as_it_is() -> None:
    llm = Enforcing(replies=["perhaps", "maybe", "no way"])
    s = step()
    spec = ReplySpec(parse=str.strip, constraint=YES_NO, reasks=2)
    reply = Door(llm, site="d").ask(s, "Is it?", spec)
    assert all(r.constraint == YES_NO for r in llm.requests)  # sent each time
    assert (s.violations, s.reasks, s.unparsed) == (3, 2, 0)
    assert reply.value == "no way"  # after the bound, the last reply goes to the parser
    assert s.raw == ["perhaps", "maybe", "no way"] and s.usage.requests == 3
    assert s.constraint == "one of ['yes', 'no']"
    assert "breaks its constraint" in s.prompts[1]


def test_a_reply_that_meets_its_constraint_is_not_re_asked() -> None:
    llm = Enforcing(replies=["yes"])
    s = step()
    reply = Door(llm, site="d").ask(s, "?", ReplySpec(parse=verdict, constraint=YES_NO, reasks=2))
    assert reply.value == "yes" and (s.violations, s.reasks) == (0, 0)


@pytest.mark.parametrize(
    ("llm", "constrain"),
    [
        (ScriptedLLM(replies=["yes"]), True),  # enforces nothing: nothing sent, nothing checked
        (Enforcing(replies=["yes"]), False),  # the method asks without
        (UnconstrainedLLM(Enforcing(replies=["yes"])), True),  # --constrain off
    ],
)
def test_a_constraint_goes_only_where_it_is_enforced_and_wanted(llm, constrain) -> None:
    s = step()
    door = Door(llm, site="d", constrain=constrain)
    assert door.ask(s, "?", ReplySpec(parse=verdict, constraint=YES_NO)).value == "yes"
    inner = llm.inner if isinstance(llm, UnconstrainedLLM) else llm
    assert inner.requests[0].constraint is None and s.constraint is None
    assert not door.enforces("choice")


def test_a_system_message_makes_chat_requests_and_the_trace_keeps_both_messages() -> None:
    llm = ScriptedLLM(replies=["yes"])
    s = step()
    Door(llm, site="d", system="Be brief.").ask(s, "Is it?", ReplySpec(parse=verdict))
    request = llm.requests[0]
    assert [m.role for m in request.messages or ()] == ["system", "user"]
    assert s.prompts == ["[system]\nBe brief.\n\n[user]\nIs it?"]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_the_trace_keeps_a_raw_prompt_exactly(prompt: str) -> None:
    assert prompt_text(Request(prompt=prompt)) == prompt
    s = step()
    Door(ScriptedLLM(replies=["x"]), site="d").ask(s, prompt, ReplySpec())
    assert s.prompts == [prompt]


def test_sampled_replies_are_all_parsed_and_the_first_is_the_value() -> None:
    llm = ScriptedLLM(replies=[["yes", "junk", "no"]])
    reply = Door(llm, site="d").ask(
        step(), "?", ReplySpec(parse=verdict, n=3, temperature=0.7, seed=5)
    )
    assert reply.value == "yes" and reply.values == ["yes", None, "no"]
    assert llm.requests[0].seed == 5 and llm.requests[0].n == 3


def test_a_model_failure_propagates_with_the_prompt_recorded() -> None:
    s = step()
    with pytest.raises(LLMError):
        Door(ScriptedLLM(replies=[LLMError("down")]), site="d").ask(s, "Is it?", ReplySpec())
    assert s.prompts == ["Is it?"] and s.raw == []


def test_the_steps_timing_stays_with_its_owner() -> None:
    trace = Trace()
    s = trace.add(TraceStep(kind="answer", name="verdict")).start()
    Door(ScriptedLLM(replies=["yes"]), site="d").ask(s, "?", ReplySpec())
    assert s.running  # the door neither starts nor stops it
    s.stop()


# -- a server that accepts the constraint and ignores it, through the door ----------------------


def test_a_constraint_ignoring_server_is_caught_and_re_asked_through_the_door(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with DialectServer("vllm", honours=False) as server:
        llm = OpenAICompletion("served", base_url=server.url)
        door = Door(llm, site="demo")
        assert door.enforces("choice")  # vLLM says it enforces choices
        s = step()
        with caplog.at_level(logging.WARNING):
            reply = door.ask(s, "q", ReplySpec(parse=str.strip, constraint=YES_NO, reasks=1))
        usual = reply_text(s.prompts[1], None, 0)  # the re-ask's prompt, answered as usual
        assert s.violations == 2 and s.reasks == 1 and server.counts.received == 2
        assert reply.value == usual  # read as it came, once the bound was spent
        assert "structured_outputs" in server.bodies[0]  # sent, then no longer trusted
        assert "structured_outputs" not in server.bodies[1]
        assert sum("not trusted" in r.getMessage() for r in caplog.records) == 1


def test_a_server_that_honours_the_constraint_answers_in_one_request() -> None:
    with DialectServer("vllm", answer="no") as server:
        s = step()
        door = Door(OpenAICompletion("served", base_url=server.url), site="demo")
        assert door.ask(s, "q", ReplySpec(parse=verdict, constraint=YES_NO, reasks=1)).value == "no"
        assert (s.violations, s.reasks, server.counts.received) == (0, 0, 1)
