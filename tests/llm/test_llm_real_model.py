"""The real embedded model (Gemma 3 270M): in process, and behind llama_cpp.server.

Run with: python -m pytest -m real_model tests/llm
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablereason.llm import (
    CachedLLM,
    ContextLengthError,
    EmptyCompletionError,
    LocalLlama,
    Message,
    OpenAIChat,
    OpenAICompletion,
    Request,
    UsageTracker,
    default_model_path,
)
from tablereason.llm.backends.embedded import default_threads
from tablereason.llm.backends.server.chat import Transport

# Short enough for every CI run (the issue asks CI to run both).
pytestmark = [pytest.mark.real_model]


def _require(module: str, install: str) -> None:
    """Fail (never skip) when the local extra is missing: CI installs it."""
    try:
        __import__(module)
    except ImportError:
        pytest.fail(f"{module} is not installed; run: {install}")


@pytest.fixture(scope="module")
def model_path() -> str:
    _require("llama_cpp", "pip install 'tablereason[local]'")
    return str(default_model_path())


def test_in_process_completion(model_path: str, tmp_path: Path) -> None:
    llm = LocalLlama(model_path, n_ctx=2048)
    tracker = UsageTracker()
    tracked = tracker.wrap(llm)
    prompt = "The capital of France is"
    req = Request(prompt=prompt, max_tokens=8, call_site="test/greedy")
    out = tracked.complete(req)
    assert out.text.strip() and out.backend == "local"
    assert out.usage.prompt_tokens == len(llm.load().tokenize(prompt.encode(), add_bos=True))
    assert 0 < out.usage.completion_tokens <= 8
    assert tracker.by_call_site()["test/greedy"].total_tokens == out.usage.total_tokens
    twice = llm.complete(req.model_copy(update={"n": 2}))  # greedy: generated once
    assert twice.texts == [out.text] * 2
    assert twice.usage.completion_tokens == 2 * out.usage.completion_tokens
    # a chat request to a model without a chat template uses the joined prompt
    chat = Request(messages=(Message(role="user", content=prompt),), max_tokens=8)
    assert llm.complete(chat).text == out.text
    # n seeded samples share the evaluated prompt. llama.cpp's logits differ in the last
    # digits when a prompt is evaluated in one batch or reused from a previous call, so
    # a sampled token can change between calls: exact replays go through the cache.
    sampled = Request(prompt="List a fruit:", n=3, temperature=1.0, seed=5, max_tokens=6)
    first = llm.complete(sampled)
    assert len(first.choices) == 3 and all(c.finish_reason for c in first.choices)
    assert first.usage.prompt_tokens == len(llm.load().tokenize(b"List a fruit:", add_bos=True))
    cached = CachedLLM(llm, tmp_path / "cache.sqlite")
    recorded = cached.complete(sampled)
    replayed = CachedLLM(llm, tmp_path / "cache.sqlite", offline=True).complete(sampled)
    assert replayed.texts == recorded.texts and replayed.cached
    with pytest.raises(ContextLengthError, match="n_ctx"):
        llm.complete(Request(prompt="word " * 2100, max_tokens=4))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(model_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _require("uvicorn", "pip install 'tablereason[local]' (llama-cpp-python[server])")
    port = _free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", model_path,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        "--n_threads", str(default_threads()), "--model_alias", "gemma",
    ]  # fmt: skip
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    log = log_path.open("w")  # a file, not a pipe: the server logs a lot and would block
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=1) as r:
                    if json.load(r)["data"]:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("llama_cpp.server did not start within 60 s")
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.parametrize("transport", ["http", "openai"])
def test_llama_cpp_server_over_http(llama_server: str, transport: Transport) -> None:
    completion = OpenAICompletion("gemma", base_url=llama_server, timeout=60, transport=transport)
    out = completion.complete(
        Request(prompt="The capital of France is", n=2, temperature=0.8, seed=3, max_tokens=6)
    )
    # the server ignores n: the client notices and asks for the second choice separately
    assert len(out.choices) == 2 and completion.supports_n is False
    assert out.usage.prompt_tokens > 0 and out.usage.completion_tokens > 0
    chat = OpenAIChat("gemma", base_url=llama_server, timeout=60, transport=transport)
    try:
        reply = chat.complete(Request(prompt="Say hello.", max_tokens=8))
    except EmptyCompletionError as error:  # base model without a chat template
        assert "OpenAICompletion" in str(error)
    else:
        assert reply.text.strip() and reply.usage.prompt_tokens > 0
