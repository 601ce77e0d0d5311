"""The lazy grammar sampler against the full mask, with a stand-in for llama.cpp's samplers.

The real model's check (the same completions as the full grammar) is in
``test_llm_real_model.py``; here the decision and the ctypes glue run without a model:
a stand-in grammar over token ids and llama.cpp's array structures.
"""

from __future__ import annotations

import ctypes
import math
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.llm.backends.grammar_sampler import (
    GrammarCounts,
    LazyGrammarSampler,
    best_allowed,
    max_index,
    pick,
)

llama_cpp = pytest.importorskip("llama_cpp")
internals = pytest.importorskip("llama_cpp._internals")

NEG = float("-inf")

# small integer logits make ties common: the lower index must win among equals
logit_lists = st.lists(st.integers(-3, 3).map(float), min_size=1, max_size=60)


def _masked_greedy(logits: list[float], allowed: set[int]) -> int:
    return max_index([x if i in allowed else NEG for i, x in enumerate(logits)])


@settings(max_examples=300, deadline=None)
@given(logit_lists, st.data())
def test_greedy_pick_is_the_full_masks_choice(logits: list[float], data: Any) -> None:
    allowed = set(data.draw(st.sets(st.integers(0, len(logits) - 1), min_size=1)))
    sizes = data.draw(st.lists(st.integers(1, 70), max_size=3).map(sorted))
    array = np.array(logits)

    def judge(ids: Any) -> Any:
        return np.isin(ids, sorted(allowed))

    token, refused = pick(
        array,
        choose=lambda xs: max_index(list(xs)),
        allows=lambda t: t in allowed,
        mask=lambda xs: np.where(np.isin(np.arange(len(xs)), sorted(allowed)), xs, NEG),
        shortlist=lambda xs: best_allowed(xs, judge, sizes),
    )
    assert token == _masked_greedy(logits, allowed)
    assert refused == (max_index(logits) not in allowed)


@settings(max_examples=300, deadline=None)
@given(logit_lists, st.data())
def test_a_shortlist_answers_only_when_it_is_sure(logits: list[float], data: Any) -> None:
    allowed = data.draw(st.sets(st.integers(0, len(logits) - 1)))
    sizes = data.draw(st.lists(st.integers(1, 70), min_size=1, max_size=3).map(sorted))
    judged: list[int] = []

    def judge(ids: Any) -> Any:
        judged.append(len(ids))
        return np.isin(ids, sorted(allowed))

    found = best_allowed(np.array(logits), judge, sizes)
    if found is not None:
        assert found == _masked_greedy(logits, set(allowed))
    elif allowed and max(sizes) >= len(logits):  # the whole list judged: always sure
        pytest.fail("judged every token and found none")
    assert all(n <= len(logits) for n in judged)


def test_a_temperature_draw_refused_is_drawn_again_under_the_mask() -> None:
    rng = random.Random(3)
    logits = [2.0, 1.0, 0.5, 0.0]
    allowed = {2, 3}

    def draw(xs: list[float]) -> int:
        weights = [0.0 if math.isinf(x) else math.exp(x) for x in xs]
        return rng.choices(range(len(xs)), weights)[0]

    picks = [
        pick(
            logits,
            choose=draw,
            allows=lambda t: t in allowed,
            mask=lambda xs: [x if i in allowed else NEG for i, x in enumerate(xs)],
        )
        for _ in range(4000)
    ]
    tokens = [t for t, _ in picks]
    assert set(tokens) <= allowed
    # the masked distribution: e^0.5 : e^0 between the two allowed tokens
    share = tokens.count(2) / len(tokens)
    assert abs(share - math.exp(0.5) / (math.exp(0.5) + 1)) < 0.03
    assert any(refused for _, refused in picks) and not all(refused for _, refused in picks)


# -- the sampler's ctypes glue, with llama.cpp's structures and stand-in samplers ------


class TokenGrammar:
    """A grammar over token ids: the allowed sequences, as a set of tuples (and their ends)."""

    def __init__(self, sequences: list[tuple[int, ...]], end: int) -> None:
        self.sequences, self.end, self.done = sequences, end, ()

    def allowed(self) -> set[int]:
        prefix = self.done
        nexts = {
            s[len(prefix)]
            for s in self.sequences
            if s[: len(prefix)] == prefix and len(s) > len(prefix)
        }
        if prefix in self.sequences:
            nexts.add(self.end)
        return nexts


class StandInLib:
    """The few llama_cpp functions the sampler calls; the chain is greedy."""

    llama_token_data = llama_cpp.llama_token_data
    llama_token_data_p = llama_cpp.llama_token_data_p
    llama_token_data_array = llama_cpp.llama_token_data_array

    def __init__(self, grammar: TokenGrammar, logits: list[list[float]]) -> None:
        self.grammar, self.steps, self.step = grammar, logits, 0
        self.judged = 0
        self._row: Any = None

    def llama_get_logits_ith(self, ctx: Any, idx: int) -> Any:
        row = self.steps[self.step]
        self._row = (ctypes.c_float * len(row))(*row)
        return ctypes.cast(self._row, ctypes.POINTER(ctypes.c_float))

    def llama_sampler_apply(self, sampler: Any, pointer: Any) -> None:
        array = pointer._obj
        if sampler == "grammar":
            allowed = self.grammar.allowed()
            self.judged += int(array.size)
            for i in range(array.size):
                if array.data[i].id not in allowed:
                    array.data[i].logit = NEG
        else:  # greedy
            array.selected = max_index([array.data[i].logit for i in range(array.size)])

    def llama_sampler_accept(self, sampler: Any, token: int) -> None:
        assert token in self.grammar.allowed()
        self.grammar.done = (*self.grammar.done, token)
        self.step += 1

    def llama_sampler_reset(self, sampler: Any) -> None:
        self.grammar.done = ()

    def llama_sampler_free(self, sampler: Any) -> None:
        pass


class GreedyChain:
    sampler = "greedy"

    def __init__(self) -> None:
        self.accepted: list[int] = []

    def accept(self, token: int) -> None:
        self.accepted.append(token)

    def reset(self) -> None:
        self.accepted.clear()


class Context:
    ctx = None


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_sampler_writes_what_the_full_mask_writes(data: Any) -> None:
    vocab = data.draw(st.integers(4, 40))
    end = vocab - 1
    sequences = data.draw(
        st.lists(
            st.lists(st.integers(0, vocab - 2), min_size=1, max_size=4).map(tuple),
            min_size=1,
            max_size=5,
        )
    )
    steps = [
        data.draw(st.lists(st.integers(-3, 3).map(float), min_size=vocab, max_size=vocab))
        for _ in range(6)
    ]
    # the full mask's greedy walk
    oracle, expected = TokenGrammar(sequences, end), []
    for row in steps:
        allowed = oracle.allowed()
        token = _masked_greedy(row, allowed)
        expected.append(token)
        if token == end:
            break
        oracle.done = (*oracle.done, token)
    lib = StandInLib(TokenGrammar(sequences, end), steps)
    chain, counts = GreedyChain(), GrammarCounts()
    candidates = internals.LlamaTokenDataArray(n_vocab=vocab)
    sampler = LazyGrammarSampler(chain, "grammar", candidates, lib, counts, greedy=True)
    written = []
    for _ in expected:
        token = sampler.sample(Context())
        written.append(token)
        if token == end:
            break
        lib.step = len(written)
    assert written == expected and chain.accepted == written
    assert counts.tokens == len(written) and counts.masked <= counts.refused <= counts.tokens


def test_the_grammar_judges_few_tokens_when_the_model_agrees_with_it() -> None:
    vocab = 5000
    row = [0.0] * vocab
    row[7], row[9] = 5.0, 4.0  # the model's favourite is allowed, then the next one
    steps = [row, [*row[:7], -1.0, *row[8:]]]
    lib = StandInLib(TokenGrammar([(7, 9)], vocab - 1), steps)
    counts = GrammarCounts()
    sampler = LazyGrammarSampler(
        GreedyChain(),
        "grammar",
        internals.LlamaTokenDataArray(n_vocab=vocab),
        lib,
        counts,
        greedy=True,
    )
    assert sampler.sample(Context()) == 7
    assert sampler.sample(Context()) == 9
    # one token judged per step: no whole-vocabulary mask
    assert lib.judged == 2 and counts.refused == 0 and counts.masked == 0
