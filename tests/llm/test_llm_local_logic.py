"""LocalLlama's request handling, against a stand-in for llama_cpp (no model needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from llama_stand_in import StandInLlama, install

from tablereason.llm import (
    ConstraintViolationError,
    ContextLengthError,
    LocalLlama,
    Message,
    OneOf,
    Request,
    to_gbnf,
)
from tablereason.llm.constraints import slot_grammar


class FakeLlama(StandInLlama):
    """The stand-in llama_cpp.Llama, answering with its seed (or a grammar's slot)."""

    instances: ClassVar[list[StandInLlama]] = []
    slot = "Wins"  # what a grammar makes it write ("" ignores grammars)

    def reply(self, options: dict[str, Any]) -> str:
        if options.get("grammar") is not None and self.slot:
            return self.slot
        return f"sample-{options['seed']}"

    def create_chat_completion(self, messages: list[dict[str, str]], **options: Any) -> Any:
        self.calls.append(("<chat>", options))
        grammar = options.get("grammar") is not None and self.slot
        text = "I think. Answer: Wins" if grammar else "templated"
        return {
            "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1},
        }


class FakeGrammar:
    def __init__(self, text: str) -> None:
        self.text = text

    @classmethod
    def from_string(cls, text: str, verbose: bool = True) -> FakeGrammar:
        return cls(text)


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    install(monkeypatch, FakeLlama, FakeGrammar)
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


COLUMNS = OneOf(options=("Year", "Wins"))


def test_a_constraint_goes_to_llama_cpp_as_a_grammar(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=64, n_threads=1)
    assert llm.complete(Request(prompt="a b", constraint=COLUMNS)).text == "Wins"
    ((prompt, options),) = FakeLlama.instances[0].calls
    assert options["grammar"].text == to_gbnf(COLUMNS) and prompt == "a b"


def test_a_slot_after_free_text_is_generated_in_two_steps(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=200, n_threads=1)
    after = COLUMNS.model_copy(update={"after": "Answer: "})
    request = Request(prompt="q", max_tokens=40, stop=("\n",), constraint=after)
    reply = llm.complete(request)
    assert reply.text == "sample-0Answer: Wins"
    (free_prompt, free), (slot_prompt, slot) = FakeLlama.instances[0].calls
    assert free_prompt == "q"
    assert "grammar" not in free and free["stop"] == ["\n", "Answer: "]
    assert free["max_tokens"] == 30  # a quarter of the limit is kept for the slot
    assert slot_prompt == "q" + "sample-0Answer: " and slot["max_tokens"] == 40 - 2
    assert slot["grammar"].text == slot_grammar(after)  # the slot's grammar alone
    assert reply.usage.completion_tokens == 4 and reply.usage.prompt_tokens == 2


def test_with_no_room_for_free_text_only_the_slot_is_generated(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=200, n_threads=1)
    after = COLUMNS.model_copy(update={"after": "Answer: "})
    assert llm.complete(Request(prompt="q", max_tokens=1, constraint=after)).text == (
        "Answer: Wins"
    )
    ((_, options),) = FakeLlama.instances[0].calls  # never a limit of 0 (llama.cpp: no limit)
    assert options["max_tokens"] == 1 and "grammar" in options


def test_through_the_chat_template_one_grammar_covers_the_reply(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=200, n_threads=1, chat="template")
    after = COLUMNS.model_copy(update={"after": "Answer: "})
    request = Request(messages=(Message(role="user", content="q"),), constraint=after)
    assert llm.complete(request).text == "I think. Answer: Wins"
    ((_, options),) = FakeLlama.instances[0].calls
    assert options["grammar"].text == to_gbnf(after)


def test_a_model_that_breaks_its_grammar_is_trusted_no_more(fake_llama: Path) -> None:
    llm = LocalLlama(fake_llama, n_ctx=64, n_threads=1)
    FakeLlama.slot = ""  # the grammar is ignored: the model writes what it likes
    try:
        for _ in range(2):
            with pytest.raises(ConstraintViolationError):
                llm.complete(Request(prompt="a", constraint=COLUMNS))
    finally:
        FakeLlama.slot = "Wins"
    first, second = FakeLlama.instances[0].calls
    assert "grammar" in first[1] and "grammar" not in second[1]
    assert not llm.enforcement.trusted


def test_only_the_last_grammars_are_kept(fake_llama: Path) -> None:
    from tablereason.llm.backends.embedded import GRAMMARS_KEPT

    llm = LocalLlama(fake_llama, n_ctx=64, n_threads=1)
    for i in range(GRAMMARS_KEPT + 10):  # the stand-in writes "Wins" under any grammar
        llm.complete(Request(prompt="a", constraint=OneOf(options=("Wins", f"c{i}"))))
    assert len(llm._grammars) == GRAMMARS_KEPT
    assert to_gbnf(OneOf(options=("Wins", f"c{GRAMMARS_KEPT + 9}"))) in llm._grammars
