"""The backend registry: entries with capabilities, the choice of a backend, model discovery."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.dialect_servers import DialectServer
from support.fake_server import FakeOpenAIServer

from tablereason.errors import ConfigurationError, LLMError
from tablereason.llm import (
    BACKENDS,
    Backend,
    Capabilities,
    LocalLlama,
    ModelSpec,
    OneOf,
    OpenAIChat,
    OpenAICompletion,
    Request,
    ScriptedLLM,
    UnconstrainedLLM,
    base_llm,
    cache_key,
    capabilities_of,
    resolve_llm,
    stack,
)
from tablereason.llm.backends.registry import choose, server_kinds
from tablereason.llm.base import KINDS


@pytest.fixture(autouse=True)
def no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "TABLEREASON_SERVER_KIND"):
        monkeypatch.delenv(name, raising=False)


def test_every_entry_declares_what_it_supports() -> None:
    assert BACKENDS.names() == [
        "local",
        "scripted",
        "openai",
        "vllm",
        "llama.cpp",
        "llama-cpp-python",
        "ollama",
        "openai-compatible",
    ]
    for name, entry in BACKENDS.items():
        assert entry.name == name and entry.description
        assert isinstance(entry.capabilities, Capabilities)
        assert entry.capabilities.constraints <= set(KINDS)
        if entry.where == "server":
            assert entry.build is not None
    caps = {name: BACKENDS.get(name).capabilities for name in BACKENDS}
    assert caps["local"].constraints == caps["vllm"].constraints == set(KINDS)
    assert caps["openai"].constraints == caps["ollama"].constraints == {"choice", "json"}
    assert not caps["openai"].after and caps["vllm"].after and caps["llama.cpp"].after
    assert caps["openai"].enforces("json") and not caps["openai"].enforces("json", after=True)
    assert not caps["ollama"].enforces("choice", endpoint="completion")
    assert not caps["llama.cpp"].n and caps["vllm"].n
    assert caps["openai-compatible"].constraints == caps["scripted"].constraints == frozenset()


def test_backends_report_their_entrys_capabilities() -> None:
    assert capabilities_of(LocalLlama("m.gguf")).constraints == set(KINDS)
    assert not capabilities_of(LocalLlama("m.gguf")).logprobs  # not without logits_all
    assert capabilities_of(LocalLlama("m.gguf", logits_all=True)).logprobs
    assert capabilities_of(ScriptedLLM(replies=[])) == BACKENDS.get("scripted").capabilities
    server = OpenAIChat("m", base_url="http://127.0.0.1:9/v1", server_kind="vllm")
    assert capabilities_of(server) == BACKENDS.get("vllm").capabilities
    assert capabilities_of(stack(server)) == capabilities_of(server)  # through the wrappers
    assert capabilities_of(stack(server, constrain="off")).constraints == frozenset()
    server.supports_n = False  # seen to ignore n
    assert not capabilities_of(server).n


@pytest.mark.parametrize(
    ("spec", "entry"),
    [
        (ModelSpec(model="local"), "local"),
        (ModelSpec(model="models/x.gguf"), "local"),
        (ModelSpec(model="gpt-4o-mini"), "openai"),
        (ModelSpec(model="m", base_url="https://api.openai.com/v1"), "openai"),
        (ModelSpec(model="m", base_url="http://127.0.0.1:8000/v1"), "openai-compatible"),
        (ModelSpec(model="m", base_url="http://h/v1", server_kind="vllm"), "vllm"),
        (ModelSpec(model="x.gguf", base_url="http://h/v1"), "openai-compatible"),
        (ModelSpec(model="m", base_url="http://h/v1", server_kind="ollama"), "ollama"),
    ],
)
def test_the_registry_chooses_the_entry_a_spec_names(spec: ModelSpec, entry: str) -> None:
    assert choose(spec).name == entry


def test_the_command_line_lists_the_registrys_server_kinds() -> None:
    from tablereason.cli.parser import SERVER_KINDS

    assert set(SERVER_KINDS) == set(server_kinds())


def test_a_plug_in_registers_a_backend_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    module = type(sys)("echo_backend")
    module.build = lambda spec: ScriptedLLM(fn=lambda r: f"echo {spec.model}")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "echo_backend", module)
    entries = dict(BACKENDS.items())
    monkeypatch.setattr(BACKENDS, "_items", {})
    echo = Backend(
        "echo",
        "echoes",
        Capabilities(),
        "process",
        build="echo_backend:build",
        claims=lambda spec: (spec.model or "").startswith("echo:"),
    )
    BACKENDS.register("echo", echo)
    for name, entry in entries.items():
        BACKENDS.register(name, entry)
    assert base_llm("echo:hi").complete(Request(prompt="q")).text == "echo echo:hi"
    assert isinstance(base_llm("local"), LocalLlama)
    with pytest.raises(ConfigurationError, match="built in Python"):
        BACKENDS.get("scripted").make(ModelSpec())


# -- the embedded model's settings and the servers' -----------------------------------------


def test_n_ctx_and_threads_reach_the_embedded_model(tmp_path: Path) -> None:
    llm = base_llm("local", n_ctx=2048, threads=3)
    assert isinstance(llm, LocalLlama) and (llm.n_ctx, llm.n_threads) == (2048, 3)
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"")
    assert base_llm(str(model), n_ctx=512).n_ctx == 512  # type: ignore[attr-defined]
    with pytest.raises(ConfigurationError, match="--n-ctx and --threads set the embedded model"):
        base_llm("m", base_url="http://127.0.0.1:9/v1", n_ctx=2048)
    with pytest.raises(ConfigurationError, match="no server is in use"):
        base_llm("local", server_kind="vllm")
    with pytest.raises(ConfigurationError, match="unknown server kind"):
        base_llm("m", base_url="http://127.0.0.1:9/v1", server_kind="vllmm")


def test_the_context_error_names_the_command_line_option() -> None:
    from tablereason.llm.backends.embedded import CONTEXT_HINT

    assert "--n-ctx" in CONTEXT_HINT and "LocalLlama(" not in CONTEXT_HINT


# -- a server named without a model ----------------------------------------------------------


@pytest.fixture
def one_model() -> Iterator[DialectServer]:
    with DialectServer("vllm") as server:
        yield server


def test_a_server_named_without_a_model_is_asked_which_it_serves(
    one_model: DialectServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = base_llm(base_url=one_model.url)
    assert llm.model == "served" and isinstance(llm, OpenAIChat)
    assert base_llm(base_url=one_model.url, endpoint="completion").model == "served"
    llm.complete(Request(prompt="q"))
    assert one_model.bodies[-1]["model"] == "served"
    monkeypatch.setenv("OPENAI_BASE_URL", one_model.url)
    assert base_llm(quiet=True).model == "served"  # from the environment too
    monkeypatch.setenv("OPENAI_MODEL", "named")
    assert base_llm(quiet=True).model == "named"  # a named model is not looked up
    assert one_model.gets.count("/v1/models") == 3


def test_a_server_with_several_models_says_which_to_choose() -> None:
    routes = {"/v1/models": {"data": [{"id": "qwen-7b"}, {"id": "llama-3"}, {"id": "phi"}]}}
    with FakeOpenAIServer(routes=routes) as server, pytest.raises(ConfigurationError) as info:
        base_llm(base_url=server.url)
    message = str(info.value)
    assert "serves 3 models (qwen-7b, llama-3, phi): choose one with --model" in message
    assert "gpt" not in message


@pytest.mark.parametrize(
    "routes",
    [{"/v1/models": {"data": []}}, {"/v1/models": {"object": "list"}}, {}],
    ids=["no-models", "no-list", "no-route"],
)
def test_a_server_without_a_model_list_is_a_clear_error(routes: dict[str, object]) -> None:
    errors = (ConfigurationError, LLMError)
    with FakeOpenAIServer(routes=routes) as server, pytest.raises(errors) as info:
        base_llm(base_url=server.url)
    assert "--model" in str(info.value) and "gpt" not in str(info.value)


def test_an_unreachable_server_named_without_a_model_names_no_model() -> None:
    with pytest.raises(LLMError) as info:
        resolve_llm(base_url="http://127.0.0.1:9/v1")
    message = str(info.value)
    assert "cannot ask the server at http://127.0.0.1:9/v1 which models it serves" in message
    assert "gpt" not in message and "--model" in message


def test_offline_replay_of_a_server_needs_the_models_name(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    with pytest.raises(ConfigurationError, match="offline replay of a server needs"):
        resolve_llm(base_url="http://127.0.0.1:9/v1", cache=cache, offline=True)
    assert resolve_llm("m", base_url="http://127.0.0.1:9/v1", cache=cache, offline=True)


def test_openai_itself_keeps_its_documented_default_model() -> None:
    assert OpenAIChat(api_key="sk-test-00000000").model == "gpt-4o-mini"
    assert OpenAICompletion(api_key="sk-test-00000000").model == "gpt-3.5-turbo-instruct"


# -- constraints off -------------------------------------------------------------------------


def test_constraints_off_is_outermost_and_keeps_the_unconstrained_cache_key(
    tmp_path: Path,
) -> None:
    scripted = ScriptedLLM(replies=["maybe"])
    llm = stack(scripted, cache=tmp_path / "c.sqlite", constrain="off")
    assert isinstance(llm, UnconstrainedLLM)
    request = Request(prompt="q", constraint=OneOf(options=("yes", "no")))
    assert llm.complete(request).text == "maybe"
    assert scripted.requests[0].constraint is None
    cached = llm.inner
    assert cached.key(request.model_copy(update={"constraint": None})) == cache_key(  # type: ignore[attr-defined]
        "scripted", "scripted", Request(prompt="q")
    )
    with pytest.raises(ConfigurationError, match="constrain must be"):
        stack(scripted, constrain="on")  # type: ignore[arg-type]
