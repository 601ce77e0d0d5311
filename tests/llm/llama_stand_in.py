"""A stand-in for llama_cpp whose results depend on how a prompt was split into batches.

Its "attention cache" records, for every position, the token and the first position of
the batch that evaluated it, as llama.cpp's results depend (in the last bits) on that
split. A reply is a digest of the cache when generation starts, so two evaluations of a
prompt give the same reply exactly when every token was evaluated in the same batches.
Like llama-cpp-python, ``create_completion`` reuses the longest prefix the context holds
(re-evaluating the last token when the whole prompt is held), evaluates the rest in
batches of ``n_batch`` and the reply's tokens one at a time (its first word, then an end
token: a later prompt that quotes the reply shares them); states of a sequence serialise
the cache.
"""

from __future__ import annotations

import ctypes
import json
import sys
import types
import zlib
from typing import Any, ClassVar

import numpy as np

from tablereason.llm.backends.prefix_states import common_prefix


def word_tokens(text: str) -> list[int]:
    """One token per word (stable ids), after a beginning-of-text token 1."""
    return [1] + [2 + zlib.crc32(w.encode()) % 50_000 for w in text.split()]


class StandInLlama:
    """The parts of ``llama_cpp.Llama`` the embedded backend uses, with a batch-aware cache."""

    instances: ClassVar[list[StandInLlama]] = []

    def __init__(self, model_path: str, n_ctx: int = 512, n_batch: int = 512, **kwargs: Any):
        self.path, self._n_ctx, self.n_batch, self.kwargs = model_path, n_ctx, n_batch, kwargs
        self.metadata: dict[str, str] = {}
        self.input_ids = np.zeros(n_ctx, dtype=np.intc)
        self.n_tokens = 0
        self._requires_eval = True
        self.cells: list[tuple[int, int]] = []
        self.evaluated = 0
        self.threads = kwargs.get("n_threads")
        self.ctx = self
        self.calls: list[tuple[str, dict[str, Any]]] = []
        type(self).instances.append(self)

    def n_ctx(self) -> int:
        return self._n_ctx

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        tokens = word_tokens(text.decode())
        return tokens if add_bos else tokens[1:]

    def eval(self, tokens: list[int]) -> None:
        del self.cells[self.n_tokens :]
        for start in range(0, len(tokens), self.n_batch):
            batch = tokens[start : start + self.n_batch]
            first = self.n_tokens
            for token in batch:
                self.cells.append((int(token), first))
                self.input_ids[self.n_tokens] = token
                self.n_tokens += 1
            self.evaluated += len(batch)

    def digest(self) -> str:
        return f"{zlib.crc32(json.dumps(self.cells).encode()):08x}"

    def create_completion(self, prompt: str, **options: Any) -> dict[str, Any]:
        self.calls.append((prompt, options))
        tokens = self.tokenize(prompt.encode())
        held = common_prefix(self.input_ids[: self.n_tokens].tolist(), tokens)
        reuse = held - 1 if held == len(tokens) else held
        self.n_tokens = max(0, reuse)
        self.eval(tokens[self.n_tokens :])
        text = self.reply(options)
        # two generated tokens, each evaluated alone: the reply's first word, then an end
        for token in [*self.tokenize(text.encode(), add_bos=False), 3, 4][:2]:
            self.eval([token])
        return {
            "choices": [{"text": text, "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": len(tokens), "completion_tokens": 2},
        }

    def reply(self, options: dict[str, Any]) -> str:
        return f"c{self.digest()}"


def _state(ctx: StandInLlama) -> bytes:
    return json.dumps(ctx.cells[: ctx.n_tokens]).encode()


def _get_data(ctx: StandInLlama, buffer: Any, size: int, seq: int) -> int:
    data = _state(ctx)
    ctypes.memmove(buffer, data, min(size, len(data)))
    return len(data)


def _set_data(ctx: StandInLlama, buffer: Any, size: int, seq: int) -> int:
    try:
        cells = [tuple(c) for c in json.loads(bytes(buffer)[:size])]
    except ValueError:
        return 0
    ctx.cells = cells  # type: ignore[assignment]
    return size


def _clear(memory: StandInLlama, data: bool) -> None:
    memory.cells = []


def _seq_rm(memory: StandInLlama, seq: int, p0: int, p1: int) -> bool:
    del memory.cells[p0:]
    return True


def _set_threads(ctx: StandInLlama, threads: int, batch_threads: int) -> None:
    ctx.threads = threads


def stand_in_module(llama_class: type = StandInLlama, grammar_class: type | None = None) -> Any:
    """A ``llama_cpp`` module made of the stand-in and the state functions it needs."""
    module = types.ModuleType("llama_cpp")
    module.Llama = llama_class  # type: ignore[attr-defined]
    module.LlamaGrammar = grammar_class  # type: ignore[attr-defined]
    module.llama_get_memory = lambda ctx: ctx  # type: ignore[attr-defined]
    module.llama_memory_clear = _clear  # type: ignore[attr-defined]
    module.llama_memory_seq_rm = _seq_rm  # type: ignore[attr-defined]
    module.llama_state_seq_get_size = lambda ctx, seq: len(_state(ctx))  # type: ignore[attr-defined]
    module.llama_state_seq_get_data = _get_data  # type: ignore[attr-defined]
    module.llama_state_seq_set_data = _set_data  # type: ignore[attr-defined]
    module.llama_set_n_threads = _set_threads  # type: ignore[attr-defined]
    return module


def install(monkeypatch: Any, llama_class: type = StandInLlama, grammar_class: type | None = None):
    """Put the stand-in in ``sys.modules`` as ``llama_cpp`` for one test."""
    module = stand_in_module(llama_class, grammar_class)
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    llama_class.instances.clear()  # type: ignore[attr-defined]
    return module
