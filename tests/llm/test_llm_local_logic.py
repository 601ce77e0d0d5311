"""LocalLlama's request handling, against a stand-in for llama_cpp (no model needed)."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tablereason.llm import ContextLengthError, LocalLlama, Message, Request


class FakeLlama:
    """Mimics the parts of llama_cpp.Llama that LocalLlama uses."""

    instances: ClassVar[list[FakeLlama]] = []

    def __init__(self, model_path: str, n_ctx: int, **kwargs: Any) -> None:
        self.path, self._n_ctx, self.kwargs = model_path, n_ctx, kwargs
        self.metadata: dict[str, str] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        FakeLlama.instances.append(self)

    def n_ctx(self) -> int:
        return self._n_ctx

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return [1] * (len(text.split()) + int(add_bos))

    def create_completion(self, prompt: str, **options: Any) -> dict[str, Any]:
        self.calls.append((prompt, options))
        text = f"sample-{options['seed']}"
        return {
            "choices": [{"text": text, "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": len(prompt.split()) + 1, "completion_tokens": 2},
        }

    def create_chat_completion(self, messages: list[dict[str, str]], **options: Any) -> Any:
        self.calls.append(("<chat>", options))
        return {
            "choices": [{"message": {"content": "templated"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1},
        }


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    FakeLlama.instances.clear()
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    return model


def test_n_samples_use_consecutive_seeds_and_count_prompt_once(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=64, n_threads=1)
    out = llm.complete(Request(prompt="a b c", n=3, temperature=0.7, seed=10, max_tokens=5))
    assert out.texts == ["sample-10", "sample-11", "sample-12"]
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (4, 6)
    assert (out.backend, out.model) == ("local", "tiny")
    options = FakeLlama.instances[0].calls[0][1]
    assert (options["top_k"], options["min_p"], options["max_tokens"]) == (0, 0.0, 5)


def test_greedy_n_is_generated_once(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=64, n_threads=1)
    out = llm.complete(Request(prompt="a", n=4))
    assert out.texts == ["sample-0"] * 4 and out.usage.completion_tokens == 8
    assert len(FakeLlama.instances[0].calls) == 1


def test_chat_without_template_uses_joined_prompt(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=64, n_threads=1)
    msgs = (Message(role="system", content="sys"), Message(role="user", content="hi there"))
    llm.complete(Request(messages=msgs))
    assert FakeLlama.instances[0].calls[-1][0] == "sys\n\nhi there"
    FakeLlama.instances[0].metadata["tokenizer.chat_template"] = "{{ messages }}"
    assert llm.complete(Request(messages=msgs)).text == "templated"


def test_context_overflow_and_max_tokens_cap(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=8, n_threads=1)
    with pytest.raises(ContextLengthError, match="context window is 8"):
        llm.complete(Request(prompt="w " * 8))
    llm.complete(Request(prompt="a b c", max_tokens=100))
    assert FakeLlama.instances[0].calls[-1][1]["max_tokens"] == 8 - 4


def test_model_loads_lazily_and_once(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_threads=1)
    assert FakeLlama.instances == []
    llm.complete(Request(prompt="x"))
    llm.complete(Request(prompt="y"))
    assert len(FakeLlama.instances) == 1
    assert FakeLlama.instances[0].kwargs["n_threads"] == 1
