"""The alternative tried for concurrent questions: one llama.cpp context, parallel sequences.

``BatchedLlama`` answers up to ``slots`` requests at once from one context with that many
sequences (llama.cpp's parallel decoding): one scheduler thread builds each batch from
the prompt chunks and the next generated token of every active sequence, decodes it once,
and samples each sequence's token from its own row of logits. Prompt beginnings are reused
as the embedded backend does (the slot's own previous tokens, or a saved prefix state
loaded into the slot's sequence, cut at multiples of the step), but the tokens of one
sequence share a batch with other sequences' tokens, so results are not exact against a
fresh evaluation.

It is a measuring prototype, not a backend: greedy decoding only (``temperature == 0``),
one choice, text prompts, no constraints or log-probabilities, which is what the
efficient Chain-of-Table profile asks. ``bench_embedded_concurrency.py`` measures it
against ``LocalLlama(workers=4)`` (one context per worker), which is what the package keeps.
"""

from __future__ import annotations

import ctypes
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from tablereason.errors import ConfigurationError
from tablereason.llm.backends.model_files import default_model_path
from tablereason.llm.backends.prefix_states import PrefixStore, common_prefix
from tablereason.llm.base import Choice, Completion, Request, SyncLLM, Usage


@dataclass
class Slot:
    """One sequence of the context and the request it is answering."""

    seq: int
    held: list[int] = field(default_factory=list)  # the tokens its cache holds
    request: Request | None = None
    future: Future[Completion] | None = None
    prompt: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)  # prompt tokens still to evaluate
    save_at: int | None = None
    generated: list[int] = field(default_factory=list)
    started: float = 0.0


class BatchedLlama(SyncLLM):
    """Greedy completions from one context with ``slots`` sequences decoded together."""

    name = "local"
    model = "gemma-3-270m-q4_k_m"

    def __init__(
        self,
        *,
        slots: int = 4,
        n_ctx: int = 8192,
        n_batch: int = 512,
        step: int = 128,
        threads: int = 1,
        state_budget_mb: float = 256,
    ) -> None:
        import llama_cpp
        from llama_cpp import _internals

        self.lib = llama_cpp
        path = str(default_model_path())
        self.llama = llama_cpp.Llama(path, n_ctx=256, n_batch=32, n_threads=1, verbose=False)
        params = llama_cpp.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = slots * n_ctx, n_batch, n_batch
        params.n_seq_max, params.kv_unified = slots, False
        params.n_threads = params.n_threads_batch = threads
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self._context = _internals.LlamaContext(
            model=self.llama._model, params=params, verbose=False
        )
        self.ctx = self._context.ctx
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.n_ctx, self.n_batch, self.step = n_ctx, n_batch, step
        self.batch = llama_cpp.llama_batch_init(n_batch, 0, slots)
        self.store = PrefixStore(int(state_budget_mb * 1e6), step=step)
        self.slots = [Slot(seq=i) for i in range(slots)]
        self.tokens_sent = self.tokens_evaluated = 0
        self._requests: queue.Queue[tuple[Request, Future[Completion]]] = queue.Queue()
        self._n_vocab = self.llama.n_vocab()
        threading.Thread(target=self._run, daemon=True, name="batched-llama").start()

    def complete(self, request: Request) -> Completion:
        """Queue the request for the scheduler; wait for its completion."""
        if request.temperature != 0 or request.constraint is not None or request.logprobs:
            raise ConfigurationError("the parallel-sequence prototype decodes greedily only")
        future: Future[Completion] = Future()
        self._requests.put((request, future))
        return future.result()

    # -- the scheduler ----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            active = [s for s in self.slots if s.request is not None]
            try:
                while len(active) < len(self.slots):
                    request, future = self._requests.get(block=not active)
                    slot = self._free_slot(request)
                    try:
                        self._begin(slot, request, future)
                    except Exception as error:  # handed to the caller
                        future.set_exception(error)
                        continue
                    active.append(slot)
            except queue.Empty:
                pass
            if active:
                self._step(active)

    def _free_slot(self, request: Request) -> Slot:
        tokens = self._tokens(request)
        free = [s for s in self.slots if s.request is None]
        return max(free, key=lambda s: common_prefix(s.held, tokens))

    def _tokens(self, request: Request) -> list[int]:
        return list(self.llama.tokenize(request.as_text().encode(), add_bos=True, special=True))

    def _begin(self, slot: Slot, request: Request, future: Future[Completion]) -> None:
        tokens = self._tokens(request)
        if len(tokens) >= self.n_ctx:
            raise ConfigurationError(f"prompt of {len(tokens)} tokens over n_ctx {self.n_ctx}")
        limit = len(tokens) - 1
        kept = self.store.cut(min(limit, common_prefix(slot.held, tokens)))
        state, usable = self.store.best(tokens, limit)
        if state is not None and usable > kept and self._restore(slot, state.data):
            self.store.use(state)
            kept = usable
        self.lib.llama_memory_seq_rm(self.memory, slot.seq, kept, -1)
        wanted = self.store.wanted(request.call_site, tokens, limit)
        covered = self.store.covered(tokens[:wanted])
        self.store.note(request.call_site, tokens)
        slot.request, slot.future, slot.prompt = request, future, tokens
        slot.held, slot.pending = tokens[:kept], tokens[kept:]
        slot.save_at = wanted if wanted > kept and not covered else None
        slot.generated, slot.started = [], time.perf_counter()
        self.tokens_sent += len(tokens)
        self.tokens_evaluated += len(tokens) - kept

    def _restore(self, slot: Slot, data: bytes) -> bool:
        self.lib.llama_memory_seq_rm(self.memory, slot.seq, 0, -1)
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if self.lib.llama_state_seq_set_data(self.ctx, buffer, len(data), slot.seq) != len(data):
            self.lib.llama_memory_seq_rm(self.memory, slot.seq, 0, -1)
            return False
        return True

    def _save(self, slot: Slot) -> bytes:
        size = int(self.lib.llama_state_seq_get_size(self.ctx, slot.seq))
        buffer = (ctypes.c_uint8 * size)()
        written = int(self.lib.llama_state_seq_get_data(self.ctx, buffer, size, slot.seq))
        return ctypes.string_at(buffer, min(size, written))

    def _add(self, token: int, slot: Slot, logits: bool) -> None:
        b, i = self.batch, self.batch.n_tokens
        b.token[i], b.pos[i], b.n_seq_id[i] = token, len(slot.held), 1
        b.seq_id[i][0], b.logits[i] = slot.seq, logits
        b.n_tokens += 1
        slot.held.append(token)

    def _step(self, active: list[Slot]) -> None:
        """One decode: a chunk of every pending prompt, the last token of every reply."""
        self.batch.n_tokens = 0
        outputs: list[tuple[Slot, int]] = []
        room = self.n_batch
        for slot in sorted(active, key=lambda s: bool(s.pending)):  # replies first: one token each
            if slot.pending:
                end = len(slot.held) + min(self.step, room, len(slot.pending))
                if slot.save_at is not None and len(slot.held) < slot.save_at:
                    end = min(end, slot.save_at)
                take, slot.pending = (
                    slot.pending[: end - len(slot.held)],
                    slot.pending[end - len(slot.held) :],
                )
                for j, token in enumerate(take):
                    last = j == len(take) - 1 and not slot.pending
                    self._add(token, slot, last)
                    if last:
                        outputs.append((slot, self.batch.n_tokens - 1))
                room -= len(take)
            elif room > 0:
                self._add(slot.generated[-1], slot, True)
                outputs.append((slot, self.batch.n_tokens - 1))
                room -= 1
            if room <= 0:
                break
        if self.batch.n_tokens and self.lib.llama_decode(self.ctx, self.batch) != 0:
            for slot in active:
                self._finish(slot, error=RuntimeError("llama_decode failed"))
            return
        for slot in active:
            if slot.save_at is not None and len(slot.held) == slot.save_at:
                self.store.add(slot.held[: slot.save_at], self._save(slot))
                slot.save_at = None
        for slot, row in outputs:
            self._sample(slot, row)

    def _sample(self, slot: Slot, row: int) -> None:
        import numpy as np

        pointer = self.lib.llama_get_logits_ith(self.ctx, row)
        token = int(np.ctypeslib.as_array(pointer, shape=(self._n_vocab,)).argmax())
        request = slot.request
        assert request is not None
        if self.lib.llama_vocab_is_eog(self.llama._model.vocab, token):
            return self._finish(slot, reason="stop")
        slot.generated.append(token)
        text = self._text(slot)
        cuts = [text.find(s) for s in request.stop if s and s in text]
        if cuts:
            return self._finish(slot, reason="stop", text=text[: min(cuts)])
        room = min(request.max_tokens, self.n_ctx - len(slot.prompt))
        if len(slot.generated) >= room:
            self._finish(slot, reason="length", text=text)

    def _text(self, slot: Slot) -> str:
        raw = self.llama.detokenize(slot.generated, prev_tokens=slot.prompt)
        return raw.decode("utf-8", errors="ignore")

    def _finish(
        self,
        slot: Slot,
        *,
        reason: str = "stop",
        text: str | None = None,
        error: Exception | None = None,
    ) -> None:
        future = slot.future
        slot.request, slot.future, slot.pending, slot.save_at = None, None, [], None
        if future is None:
            return
        if error is not None:
            future.set_exception(error)
            return
        usage = Usage(prompt_tokens=len(slot.prompt), completion_tokens=len(slot.generated))
        body = self._text(slot) if text is None else text
        future.set_result(
            Completion(
                choices=(Choice(text=body, finish_reason=reason),),
                usage=usage,
                latency_s=time.perf_counter() - slot.started,
                backend=self.name,
                model=self.model,
            )
        )

    def stats(self) -> dict[str, Any]:
        """Prompt tokens sent and evaluated, and the saved states."""
        return {
            "tokens_sent": self.tokens_sent,
            "tokens_evaluated": self.tokens_evaluated,
            "states": self.store.stats().__dict__,
        }
