"""One llama.cpp context of the embedded model, brought to each prompt's exact reusable beginning.

Before a request's prompt is evaluated, :meth:`ModelContext.start` keeps, of what the
context already holds (the previous prompt, never its reply: the reply's tokens were
generated one at a time, not in a fresh evaluation's batches) or of a saved prefix state
(:mod:`~tablereason.llm.backends.prefix_states`), the longest beginning of the new prompt
that ends at a multiple of the evaluation batch, and drops the rest. llama-cpp-python then
evaluates only the tokens after it, in the batches a fresh evaluation would use, so the
completion is the same as if the whole prompt had been evaluated afresh. When the prompt
shares a longer batch-aligned beginning with a recent prompt of its call site than any
saved state holds, that beginning is evaluated first and its state saved (only the
sequence's attention cache, through llama.cpp's per-sequence state functions: a full
``Llama.save_state`` also copies llama-cpp-python's logits buffer, 512 MB for this
vocabulary at ``n_batch=512``).

With ``reuse=False`` every prompt is evaluated from its first token (the baseline of the
benchmarks; llama-cpp-python's own reuse of the previous prompt is also off then).

Example:
    >>> ReuseStats().tokens_sent
    0
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tablereason.llm.backends.prefix_states import PrefixState, PrefixStore, common_prefix

SEQUENCE = 0
"""The one sequence each context evaluates."""


@dataclass(frozen=True)
class ReuseStats:
    """How much prompt evaluation the context (or all contexts of a model) was spared.

    Attributes:
        prompts: Prompts started (the first evaluation of each request).
        tokens_sent: Their tokens.
        tokens_evaluated: Those the model evaluated (the rest was restored or kept).
        from_states: Prompts started from a saved prefix state.
        from_context: Prompts started from what the context held.
        states_saved: Prefix states this context saved.
    """

    prompts: int = 0
    tokens_sent: int = 0
    tokens_evaluated: int = 0
    from_states: int = 0
    from_context: int = 0
    states_saved: int = 0

    def __add__(self, other: ReuseStats) -> ReuseStats:
        return ReuseStats(
            *(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__)
        )


class ModelContext:
    """A loaded ``llama_cpp.Llama`` with its lock and its share of a prefix store.

    Args:
        llama: The loaded model and its context.
        store: Prefix states shared by the model's contexts (None: none are saved).
        reuse: Whether anything already evaluated may be reused.
        threads: The threads the context was made with.
    """

    def __init__(
        self, llama: Any, store: PrefixStore | None, *, reuse: bool = True, threads: int = 1
    ) -> None:
        self.llama = llama
        self.store = store
        self.reuse = reuse
        self.threads = threads
        self.stats = ReuseStats()
        self._prompt_end = 0
        """Leading tokens of the context evaluated as a prompt, in batches that begin at
        multiples of the step; what follows (a reply, generated a token at a time) is
        never kept for another prompt."""
        self._llama_cpp: Any = None

    def share_threads(self, total: int, busy: int) -> None:
        """Use an equal share of ``total`` threads with ``busy`` contexts running (at least 1)."""
        threads = max(1, total // max(1, busy))
        if threads != self.threads:
            self._lib().llama_set_n_threads(self.llama.ctx, threads, threads)
            self.threads = threads

    def start_unknown(self) -> None:
        """Before a prompt whose tokens are not known here (a chat template's).

        llama-cpp-python reuses what the context holds as it does by itself, unless reuse
        is off (then nothing is kept).
        """
        self._prompt_end = 0
        if not self.reuse:
            self._keep(0)

    def _lib(self) -> Any:
        if self._llama_cpp is None:
            import llama_cpp

            self._llama_cpp = llama_cpp
        return self._llama_cpp

    def start(self, tokens: Sequence[int], site: str | None) -> int:
        """Make the context hold the longest exact reusable beginning of ``tokens``.

        Call it with the lock held, before the prompt is evaluated.

        Returns:
            How many of the prompt's tokens remain to be evaluated.
        """
        prompt = list(tokens)
        limit = len(prompt) - 1  # the last token is always evaluated, for its logits
        kept, source = 0, ""
        if self.reuse and self.store is not None and limit > 0:
            live = self.llama.input_ids[: min(self.llama.n_tokens, self._prompt_end)].tolist()
            kept = self.store.cut(min(limit, common_prefix(live, prompt)))
            source = "from_context" if kept else ""
            state, usable = self.store.best(prompt, limit)
            if state is not None and usable > kept:
                restored = self._restore(state)
                if restored:
                    self.store.use(state)
                kept, source = (usable, "from_states") if restored else (0, "")
        self._keep(kept)
        saved = 0
        if self.store is not None and self.reuse and limit > 0:
            wanted = self.store.wanted(site, prompt, limit)
            if wanted > kept and not self.store.covered(prompt[:wanted]):
                self.llama.eval(prompt[kept:wanted])
                saved = int(self.store.add(prompt[:wanted], self._save()))
            self.store.note(site, prompt)
        self._prompt_end = len(prompt)
        update: dict[str, int] = {
            "prompts": self.stats.prompts + 1,
            "tokens_sent": self.stats.tokens_sent + len(prompt),
            "tokens_evaluated": self.stats.tokens_evaluated + len(prompt) - kept,
            "states_saved": self.stats.states_saved + saved,
        }
        if source:
            update[source] = getattr(self.stats, source) + 1
        self.stats = replace(self.stats, **update)
        return len(prompt) - kept

    def _keep(self, n: int) -> None:
        """Keep the first ``n`` evaluated tokens and drop the rest from the cache."""
        lib, llama = self._lib(), self.llama
        memory = lib.llama_get_memory(llama.ctx)
        if n == 0:
            lib.llama_memory_clear(memory, True)
        else:
            lib.llama_memory_seq_rm(memory, SEQUENCE, n, -1)
        llama.n_tokens = n
        llama._requires_eval = True  # what is kept must be decoded past before sampling

    def _save(self) -> bytes:
        """The serialised attention cache of the context's sequence."""
        lib, ctx = self._lib(), self.llama.ctx
        size = int(lib.llama_state_seq_get_size(ctx, SEQUENCE))
        buffer = (ctypes.c_uint8 * size)()
        written = int(lib.llama_state_seq_get_data(ctx, buffer, size, SEQUENCE))
        return ctypes.string_at(buffer, min(written, size))

    def _restore(self, state: PrefixState) -> bool:
        """Load a saved state into the context; False (and an empty cache) if it does not load."""
        lib, llama = self._lib(), self.llama
        memory = lib.llama_get_memory(llama.ctx)
        lib.llama_memory_clear(memory, True)
        buffer = (ctypes.c_uint8 * state.size).from_buffer_copy(state.data)
        read = int(lib.llama_state_seq_set_data(llama.ctx, buffer, state.size, SEQUENCE))
        if read != state.size:
            lib.llama_memory_clear(memory, True)
            llama.n_tokens = 0
            return False
        llama.input_ids[: len(state.tokens)] = state.tokens
        llama.n_tokens = len(state.tokens)
        return True
