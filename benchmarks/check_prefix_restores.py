"""Which prompts of the real-model exactness test start from a restored state, and which differ.

Asks the prompts of ``tests/llm/test_llm_prefix_exact.py``'s slow test (four kinds of
golden prompts, each beginning with three question parts) on a reusing and a fresh
``LocalLlama`` and prints, for each, how many tokens were kept, from where (the context
or a saved prefix state), and whether the reply was the fresh one; a differing prompt is
also asked of a new fresh model, for which it is the first prompt.

With ``--alone N`` it takes prompt N instead and, in one new context, compares the fresh
reply with the replies after its first 768 tokens were kept in the context, saved and
restored as a sequence's state, as the whole context's state, and restored after the
sequence was removed rather than the memory cleared; it also says whether two
evaluations of those tokens serialise to the same bytes.

    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/check_prefix_restores.py
    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/check_prefix_restores.py --alone 8
    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/check_prefix_restores.py --states

With ``--states`` it also compares, for every prompt started from a restored state, the
reusing context's serialised sequence just before the reply is generated (the restored
beginning and what was evaluated after it to save a longer one) with the same tokens
evaluated afresh in a new context, and the replies of both contexts continued from there.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "llm"))

from test_llm_prefix_exact import REAL_KINDS, TESTS, asked, real_site

from tablereason.llm import LocalLlama, Request


def alone(prompt: str, kept: int = 768) -> None:
    """One prompt in one context: fresh, then its beginning kept, or restored four ways."""
    import llama_cpp as lib

    from tablereason.llm.backends.model_files import default_model_path

    llama = lib.Llama(
        str(default_model_path()), n_ctx=8192, n_batch=128, n_threads=1, verbose=False
    )
    ctx, memory = llama.ctx, lib.llama_get_memory(llama.ctx)
    tokens = llama.tokenize(prompt.encode(), add_bos=True, special=True)

    def clear() -> None:
        lib.llama_memory_clear(memory, True)
        llama.n_tokens = 0

    def reply(restored: bool = False) -> str:
        if restored:
            llama.input_ids[:kept] = tokens[:kept]
            llama.n_tokens = kept
        llama._requires_eval = True
        options: dict[str, Any] = {"temperature": 0, "top_k": 0, "min_p": 0, "stop": ["\n\n"]}
        out = llama.create_completion(tokens, max_tokens=16, repeat_penalty=1, **options)
        return str(out["choices"][0]["text"])

    def copy(size: int, fill: Any) -> bytes:
        buffer = (ctypes.c_uint8 * size)()
        return bytes(buffer)[: fill(buffer, size)]

    def seq_state() -> bytes:
        size = lib.llama_state_seq_get_size(ctx, 0)
        return copy(size, lambda b, n: lib.llama_state_seq_get_data(ctx, b, n, 0))

    def load(data: bytes, whole: bool) -> None:
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if whole:
            lib.llama_state_set_data(ctx, buffer, len(data))
        else:
            lib.llama_state_seq_set_data(ctx, buffer, len(data), 0)

    clear()
    fresh = reply()
    print(f"fresh: {fresh!r}")
    clear()
    llama.eval(tokens[:kept])
    sequence = seq_state()
    whole = copy(lib.llama_state_get_size(ctx), lambda b, n: lib.llama_state_get_data(ctx, b, n))
    print(f"kept in the context: same {reply() == fresh}")
    clear()
    llama.eval(tokens[:kept])
    print(f"two evaluations serialise alike: {seq_state() == sequence} ({len(sequence)} bytes)")
    for name, data, is_whole in (("sequence", sequence, False), ("whole", whole, True)):
        clear()
        load(data, is_whole)
        print(f"restored as the {name} state ({len(data)} bytes): same {reply(True) == fresh}")
    clear()
    llama.eval(tokens[:kept])
    lib.llama_memory_seq_rm(memory, 0, 0, -1)
    load(sequence, False)
    print(f"restored after the sequence was removed: same {reply(True) == fresh}")


def watch_states(reusing: LocalLlama) -> None:
    """After each start from a restored state, compare the context with a fresh evaluation."""
    import llama_cpp as lib

    from tablereason.llm.backends import llama_context
    from tablereason.llm.backends.model_files import default_model_path

    witness = lib.Llama(
        str(default_model_path()), n_ctx=8192, n_batch=128, n_threads=1, verbose=False
    )
    start = llama_context.ModelContext.start

    def watched(self: Any, tokens: Any, site: Any) -> int:
        before = self.stats.from_states
        left = start(self, tokens, site)
        if self.stats.from_states > before:
            n = int(self.llama.n_tokens)
            mine = self._save()
            lib.llama_memory_clear(lib.llama_get_memory(witness.ctx), True)
            witness.n_tokens = 0
            witness.eval(list(tokens)[:n])
            theirs = llama_context.ModelContext(witness, None)._save()
            print(
                f"   restored: context holds {n} tokens; the same tokens evaluated afresh "
                f"serialise alike: {mine == theirs} ({len(mine)} bytes)",
                flush=True,
            )
        return left

    llama_context.ModelContext.start = watched  # type: ignore[method-assign]


def main() -> int:
    prompts = [(real_site(site), p) for site, p in asked([TESTS / k for k in REAL_KINDS])]
    if "--alone" in sys.argv:
        alone(prompts[int(sys.argv[sys.argv.index("--alone") + 1])][1])
        return 0
    reusing = LocalLlama(n_ctx=8192, n_threads=1)
    fresh = LocalLlama(n_ctx=8192, n_threads=1, reuse=False)
    if "--states" in sys.argv:
        watch_states(reusing)
    differ = 0
    for i, (site, prompt) in enumerate(prompts):
        request = Request(prompt=prompt, call_site=site, max_tokens=16, stop=("\n\n",))
        before = reusing.reuse_stats()
        got = reusing.complete(request).text
        after = reusing.reuse_stats()
        want = fresh.complete(request).text
        source = (
            "a saved state"
            if after.from_states > before.from_states
            else "the context"
            if after.from_context > before.from_context
            else "nothing"
        )
        kept = (after.tokens_sent - before.tokens_sent) - (
            after.tokens_evaluated - before.tokens_evaluated
        )
        print(f"{i} {site}: {kept} tokens kept from {source}, same: {got == want}", flush=True)
        if got != want:
            differ += 1
            first = LocalLlama(n_ctx=8192, n_threads=1, reuse=False).complete(request).text
            print(f"   reusing {got!r}\n   fresh   {want!r}\n   first   {first!r}", flush=True)
    print(f"{differ} of {len(prompts)} replies differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
