"""Which prompts of the real-model exactness test start from a restored state, and which differ.

Asks the prompts of ``tests/llm/test_llm_prefix_exact.py``'s slow test (four kinds of
golden prompts, each beginning with three question parts) on a reusing and a fresh
``LocalLlama`` and prints, for each, how many tokens were kept, from where (the context
or a saved prefix state), and whether the reply was the fresh one; a differing prompt is
also asked of a new fresh model, for which it is the first prompt.

    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/check_prefix_restores.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "llm"))

from test_llm_prefix_exact import REAL_KINDS, TESTS, asked, real_site

from tablereason.llm import LocalLlama, Request


def main() -> int:
    prompts = [(real_site(site), p) for site, p in asked([TESTS / k for k in REAL_KINDS])]
    reusing = LocalLlama(n_ctx=8192, n_threads=1)
    fresh = LocalLlama(n_ctx=8192, n_threads=1, reuse=False)
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
