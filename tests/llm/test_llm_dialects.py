"""Each kind of server is sent its own constraint fields, and a server that ignores them is caught.

Fake servers of each kind (``support.dialect_servers``) say what they are as the real
ones do and record every body; the tests read the recorded bodies. Every test runs
through both transports (the ``openai`` package and the lean JSON client).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from support.dialect_servers import DialectServer
from support.fake_server import reply_text

from tablereason.errors import ConfigurationError
from tablereason.llm import (
    Grammar,
    JSONSchema,
    OneOf,
    OpenAIChat,
    OpenAICompletion,
    Regex,
    Request,
    UsageTracker,
    capabilities_of,
    resolve_llm,
    to_gbnf,
)
from tablereason.llm.backends.server import probe
from tablereason.llm.errors import ConstraintViolationError

pytestmark = pytest.mark.usefixtures("transport")

YES_NO = OneOf(options=("yes", "no"))
SCHEMA = {
    "type": "object",
    "properties": {
        "column": {"type": "string"},
        "rows": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["column", "rows"],
    "additionalProperties": False,
}


@pytest.fixture
def vllm() -> Iterator[DialectServer]:
    with DialectServer("vllm") as server:
        yield server


def _fields(body: dict[str, object]) -> dict[str, object]:
    """The body without the fields every request has."""
    common = {"model", "messages", "prompt", "temperature", "top_p", "max_tokens", "stop", "n"}
    return {k: v for k, v in body.items() if k not in common}


# -- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind", ["vllm", "llama.cpp", "llama-cpp-python", "ollama", "openai", "openai-compatible"]
)
def test_the_server_kind_is_what_the_server_says(kind: str) -> None:
    with DialectServer(kind) as server:
        llm = OpenAIChat("served", base_url=server.url)
        assert llm.kind == kind
        assert OpenAIChat("served", base_url=server.url).kind == kind
        assert server.gets.count("/v1/models") == 1  # asked once per server, then remembered


def test_a_server_that_says_nothing_is_generic_and_detection_never_fails() -> None:
    from support.fake_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:  # no GET routes at all: every probe is a 404
        llm = OpenAIChat("m", base_url=server.url)
        assert llm.kind == "openai-compatible"
        assert server.gets == ["/v1/models", "/version", "/props", "/api/version"]
    probe.forget()
    gone = OpenAIChat("m", base_url="http://127.0.0.1:9/v1", server_kind=None)
    assert gone.kind == "openai-compatible"  # nothing listens there: still no error


def test_the_kind_is_asked_only_for_constrained_requests(vllm: DialectServer) -> None:
    llm = OpenAIChat("served", base_url=vllm.url)
    llm.complete(Request(prompt="plain"))
    assert vllm.gets == []
    llm.complete(Request(prompt="q", constraint=YES_NO))
    assert vllm.gets == ["/v1/models"]


def test_server_kind_option_and_environment_win_over_detection(
    vllm: DialectServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert OpenAIChat("served", base_url=vllm.url, server_kind="llama.cpp").kind == "llama.cpp"
    monkeypatch.setenv("TABLEREASON_SERVER_KIND", "ollama")
    assert OpenAIChat("served", base_url=vllm.url).kind == "ollama"
    assert vllm.gets == []  # nothing asked
    with pytest.raises(ConfigurationError, match=r"unknown server kind 'vllmm'.*vllm"):
        OpenAIChat("served", base_url=vllm.url, server_kind="vllmm")
    monkeypatch.setenv("TABLEREASON_SERVER_KIND", "nope")
    with pytest.raises(ConfigurationError, match=r"\$TABLEREASON_SERVER_KIND"):
        OpenAIChat("served", base_url=vllm.url)


# -- the fields each kind is sent -----------------------------------------------------------


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAICompletion])
def test_vllm_gets_structured_outputs(vllm: DialectServer, cls: type[OpenAIChat]) -> None:
    llm = cls("served", base_url=vllm.url)
    regex = Regex(pattern=r"row \d+")
    grammar = Grammar(gbnf='root ::= "a" | "b"')
    vllm.answer = "yes"
    assert llm.complete(Request(prompt="q", constraint=YES_NO)).text == "yes"
    for constraint in (regex, JSONSchema(json_schema=SCHEMA), grammar):
        vllm.answer = {"regex": "row 12", "json": '{"column": "a", "rows": [1]}', "grammar": "b"}[
            constraint.kind
        ]
        assert llm.complete(Request(prompt="q", constraint=constraint)).text == vllm.answer
    after = OneOf(options=("yes", "no"), after="Answer: ")
    vllm.answer = "It is so. Answer: no"
    assert llm.complete(Request(prompt="q", constraint=after)).text == vllm.answer
    sent = [_fields(b) for b in vllm.bodies]
    assert sent == [
        {"structured_outputs": {"choice": ["yes", "no"]}},
        {"structured_outputs": {"regex": r"row \d+"}},
        {"structured_outputs": {"json": SCHEMA}},
        {"structured_outputs": {"grammar": 'root ::= "a" | "b"'}},
        {"structured_outputs": {"grammar": to_gbnf(after)}},
    ]
    assert all("guided_choice" not in b and "guided_json" not in b for b in vllm.bodies)


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAICompletion])
def test_llama_cpp_servers_get_a_grammar(cls: type[OpenAIChat]) -> None:
    with DialectServer("llama.cpp") as cpp, DialectServer("llama-cpp-python") as python:
        for server in (cpp, python):
            llm = cls("served", base_url=server.url)
            server.answer = "no"
            assert llm.complete(Request(prompt="q", constraint=YES_NO)).text == "no"
            server.answer = '{"column": "x", "rows": []}'
            llm.complete(Request(prompt="q", constraint=JSONSchema(json_schema=SCHEMA)))
        assert _fields(cpp.bodies[0]) == {"grammar": to_gbnf(YES_NO)}
        assert _fields(cpp.bodies[1]) == {"json_schema": SCHEMA}  # it converts schemas itself
        assert _fields(python.bodies[0]) == {"grammar": to_gbnf(YES_NO)}
        # llama-cpp-python's server reads no json_schema field: the schema goes as a grammar
        schema_grammar = to_gbnf(JSONSchema(json_schema=SCHEMA))
        assert _fields(python.bodies[1]) == {"grammar": schema_grammar}


def test_openai_gets_a_strict_json_schema_and_the_reply_is_unwrapped() -> None:
    with DialectServer("openai") as server:
        llm = OpenAIChat("served", base_url=server.url)
        server.answer = "no"
        assert llm.complete(Request(prompt="q", constraint=YES_NO)).text == "no"
        server.answer = '{"column": "a", "rows": [2]}'
        reply = llm.complete(Request(prompt="q", constraint=JSONSchema(json_schema=SCHEMA)))
        assert reply.text == server.answer
        format_choice, format_schema = (b["response_format"] for b in server.bodies)
    assert format_choice == {
        "type": "json_schema",
        "json_schema": {
            "name": "reply",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
                "required": ["answer"],
                "additionalProperties": False,
            },
        },
    }
    assert format_schema["json_schema"]["schema"] == SCHEMA
    assert format_schema["json_schema"]["strict"] is True


@pytest.mark.parametrize(
    "constraint",
    [
        Regex(pattern="[0-9]+"),
        Grammar(gbnf='root ::= "a"'),
        OneOf(options=("yes", "no"), after="Answer: "),
        JSONSchema(json_schema={"type": "object", "properties": {"a": {"type": "integer"}}}),
    ],
    ids=["regex", "grammar", "after", "not-strict"],
)
def test_openai_is_not_sent_what_it_cannot_express(constraint: object) -> None:
    with DialectServer("openai", honours=False) as server:
        llm = OpenAIChat("served", base_url=server.url)
        with pytest.raises(ConstraintViolationError):
            llm.complete(Request(prompt="q", constraint=constraint))  # type: ignore[arg-type]
        assert "response_format" not in server.bodies[0]
        assert llm.enforcement.trusted  # nothing was sent, so nothing was ignored


def test_ollama_gets_its_format_through_response_format() -> None:
    with DialectServer("ollama") as server:
        chat = OpenAIChat("served", base_url=server.url)
        server.answer = "yes"
        assert chat.complete(Request(prompt="q", constraint=YES_NO)).text == "yes"
        server.answer = '{"column": "c", "rows": [3]}'
        assert chat.complete(Request(prompt="q", constraint=JSONSchema(json_schema=SCHEMA))).text
        sent = [b["response_format"] for b in server.bodies]
        assert sent == [
            {"type": "json_schema", "json_schema": {"name": "reply", "schema": YES_NO_ENUM}},
            {"type": "json_schema", "json_schema": {"name": "reply", "schema": SCHEMA}},
        ]
        assert all("format" not in b for b in server.bodies)  # /v1 ignores a top-level format
        # Ollama's /v1/completions reads no response_format: nothing is sent there
        completion = OpenAICompletion("served", base_url=server.url)
        with pytest.raises(ConstraintViolationError):
            completion.complete(Request(prompt="q", constraint=YES_NO))
        assert "response_format" not in server.bodies[-1]


YES_NO_ENUM = {"type": "string", "enum": ["yes", "no"]}


def test_any_other_server_is_sent_nothing_and_its_replies_are_checked() -> None:
    with DialectServer("openai-compatible") as server:
        llm = OpenAIChat("served", base_url=server.url)
        with pytest.raises(ConstraintViolationError) as info:
            llm.complete(Request(prompt="q", constraint=YES_NO))
        assert _fields(server.bodies[0]) == {}
        assert info.value.completion.text == reply_text("q", None, 0)
        assert capabilities_of(llm).constraints == frozenset()
        ok = Regex(pattern=r"reply [0-9a-f]+ choice 0")
        assert llm.complete(Request(prompt="q", constraint=ok)).text == reply_text("q", None, 0)


# -- fail closed ----------------------------------------------------------------------------


def test_a_server_that_ignores_the_constraint_is_caught_once_and_then_not_trusted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with DialectServer("vllm", honours=False) as server:
        tracker = UsageTracker()
        llm = resolve_llm("served", base_url=server.url, tracker=tracker)
        bare = llm
        while hasattr(bare, "inner"):
            bare = bare.inner
        with caplog.at_level(logging.WARNING):
            for _ in range(3):  # the caller re-asks, as the door will
                with pytest.raises(ConstraintViolationError) as info:
                    llm.complete(Request(prompt="q", constraint=YES_NO))
                assert info.value.completion.text == reply_text("q", None, 0)
        warnings = [r for r in caplog.records if "not trusted" in r.getMessage()]
        assert len(warnings) == 1 and "vllm server" in warnings[0].getMessage()
        # sent once; from then on no constraint goes to it, and replies are still checked
        assert ["structured_outputs" in b for b in server.bodies] == [True, False, False]
        assert server.counts.received == 3  # not retried behind the caller's back
        assert tracker.total().malformed == 3 and tracker.total().requests == 3
        stats = bare.enforcement.stats()
        assert (stats.sent, stats.checked, stats.violations, stats.trusted) == (1, 3, 3, False)


def test_a_reply_cut_by_the_token_limit_does_not_cost_the_server_its_trust() -> None:
    with DialectServer("vllm", answer="ye") as server:  # a valid start of "yes", cut short
        llm = OpenAIChat("served", base_url=server.url)
        with pytest.raises(ConstraintViolationError):
            llm.complete(Request(prompt="q", constraint=YES_NO))
        assert llm.enforcement.trusted
        server.answer = "perhaps"  # not even a start of a valid reply: the field was ignored
        with pytest.raises(ConstraintViolationError):
            llm.complete(Request(prompt="q", constraint=YES_NO))
        assert not llm.enforcement.trusted


def test_constraints_off_sends_and_checks_nothing(vllm: DialectServer) -> None:
    llm = resolve_llm("served", base_url=vllm.url, constrain="off")
    text = llm.complete(Request(prompt="q", constraint=YES_NO)).text
    assert text == reply_text("q", None, 0)
    assert _fields(vllm.bodies[0]) == {} and vllm.gets == []


def test_n_choices_are_each_checked(vllm: DialectServer) -> None:
    llm = OpenAIChat("served", base_url=vllm.url)
    completion = llm.complete(Request(prompt="q", n=3, temperature=0.5, constraint=YES_NO))
    assert completion.texts == ["yes"] * 3
    assert json.loads(json.dumps(vllm.bodies[0]))["n"] == 3


def test_vllm_gets_the_pattern_without_the_anchors_a_whole_match_makes_redundant() -> None:
    from tablereason.llm.backends.server import dialects

    sent = dialects.vllm(Regex(pattern=r"^row \d+$"), "completion")
    assert sent is not None and sent.fields == {"structured_outputs": {"regex": r"row \d+"}}
    escaped = dialects.vllm(Regex(pattern=r"cost \$"), "chat")
    assert escaped is not None and escaped.fields["structured_outputs"] == {"regex": r"cost \$"}
