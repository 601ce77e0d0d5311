"""Prefix state reuse in the embedded model: exact, bounded, and actually reusing.

Against the batch-aware stand-in for llama_cpp (``llama_stand_in.py``): its replies differ
whenever a prompt's tokens were evaluated in other batches than a fresh evaluation uses,
as llama.cpp's do, so "same reply as a fresh evaluation" is a real check here. The real
model is checked in ``test_llm_prefix_real_model.py``.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_stand_in import StandInLlama, word_tokens

from tablereason.llm import LocalLlama, Request
from tablereason.llm.backends.context_pool import ContextPool
from tablereason.llm.backends.prefix_states import PrefixStore, common_prefix

# -- the store ------------------------------------------------------------------------------

tokens = st.lists(st.integers(0, 5), max_size=600)


def naive_common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@given(tokens, tokens, st.integers(0, 600))
def test_common_prefix_counts_the_shared_beginning(a: list[int], b: list[int], at: int) -> None:
    assert common_prefix(a, b) == naive_common_prefix(a, b)
    shared = a + b  # long shared runs cross the chunks the comparison works in
    assert common_prefix(shared, [*shared[:at], 9, *shared[at:]]) == min(at, len(shared))


@settings(max_examples=60)
@given(
    st.lists(st.tuples(tokens, st.integers(1, 400)), max_size=20),
    st.integers(0, 2000),
    st.integers(1, 16),
)
def test_saved_states_stay_within_the_budget_least_recently_used_first(
    states: list[tuple[list[int], int]], budget: int, step: int
) -> None:
    store = PrefixStore(budget, step=step)
    for prefix, size in states:
        kept = store.add(prefix, b"x" * size)
        held = store.stats()
        assert held.bytes_held <= budget
        assert kept == (size <= budget)
        if kept:  # the newest state is always kept, the oldest go first
            assert store.covered(prefix)
    stats = store.stats()
    assert stats.saved - stats.evicted - stats.states >= 0


def test_the_least_recently_used_state_goes_first() -> None:
    store = PrefixStore(300, step=1)
    for prefix in ([1], [2], [3]):
        store.add(prefix, b"x" * 100)
    state, _ = store.best([1, 5], limit=1)
    assert state is not None
    store.use(state)  # [1] is now the most recent; [2] is the oldest
    store.add([4], b"x" * 100)
    assert store.covered([1]) and not store.covered([2]) and store.covered([3])
    assert store.stats().evicted == 1 and store.stats().restored == 1


@given(st.lists(tokens, min_size=1, max_size=6), tokens, st.integers(1, 32), st.integers(0, 700))
def test_the_best_state_is_the_longest_usable_cut_beginning(
    saved: list[list[int]], prompt: list[int], step: int, limit: int
) -> None:
    store = PrefixStore(10**9, step=step)
    for prefix in saved:
        store.add(prefix, b"s")
    state, usable = store.best(prompt, limit)
    expected = max((min(limit, common_prefix(p, prompt)) // step * step for p in saved), default=0)
    assert usable == expected and usable % step == 0 and usable <= limit
    assert (state is None) == (expected == 0)
    if state is not None:
        assert list(state.tokens[:usable]) == prompt[:usable]


@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), tokens), max_size=12), tokens)
def test_the_wanted_beginning_is_the_longest_shared_with_a_recent_prompt_of_the_site(
    seen: list[tuple[str | None, list[int]]], prompt: list[int]
) -> None:
    store = PrefixStore(step=4, recent=3)
    for site, earlier in seen:
        store.note(site, earlier)
    for site in ("a", "b", None):
        recent: list[list[int]] = []
        for s, earlier in seen:
            if s == site and earlier not in recent:
                recent = ([*recent, earlier])[-3:]
        shared = max((common_prefix(p, prompt) for p in recent), default=0)
        assert store.wanted(site, prompt) == shared // 4 * 4


# -- the embedded model with reuse -------------------------------------------------------------

DEMOS = {  # three prompt kinds; two share their call site, as TabFact and WikiTQ plans do
    "plan-tabfact": ("chain/plan", "plan the chain " + "demo row tabfact " * 9),
    "plan-wikitq": ("chain/plan", "plan the chain " + "demo row wikitq " * 11),
    "answer": ("chain/answer", "answer from the table " + "example answer " * 7),
}
QUESTIONS = ["table one two three question", "other table with rows", "a b c d e f g", "x"]


@pytest.fixture
def model(stand_in_model: Path) -> Path:
    return stand_in_model


def ask(llm: LocalLlama, kind: str, question: str) -> str:
    site, demos = DEMOS[kind]
    return llm.complete(Request(prompt=f"{demos} {question}", call_site=site, max_tokens=4)).text


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)  # the fixture only installs the stand-in; each example builds its own models
@given(
    st.lists(st.tuples(st.sampled_from(sorted(DEMOS)), st.sampled_from(QUESTIONS)), max_size=14),
    st.sampled_from([1, 2, 3, 5, 8]),
    st.sampled_from([0, 400, 2000, 10**6]),
)
def test_every_reply_is_the_one_a_fresh_evaluation_gives(
    model: Path, asked: list[tuple[str, str]], n_batch: int, budget: int
) -> None:
    reusing = LocalLlama(
        model, n_ctx=256, n_threads=1, n_batch=n_batch, state_budget_mb=budget / 1e6
    )
    fresh = LocalLlama(model, n_ctx=256, n_threads=1, n_batch=n_batch, reuse=False)
    for kind, question in asked:
        assert ask(reusing, kind, question) == ask(fresh, kind, question)
        assert reusing.prefixes is not None
        assert reusing.prefixes.stats().bytes_held <= budget
    used, baseline = reusing.reuse_stats(), fresh.reuse_stats()
    assert used.tokens_sent == baseline.tokens_sent == baseline.tokens_evaluated
    assert used.tokens_evaluated <= used.tokens_sent


def test_without_the_batch_cut_the_replies_would_differ(model: Path) -> None:
    """What the cut guards against: llama-cpp-python's own reuse of the previous prompt."""
    llama = StandInLlama("tiny.gguf", n_ctx=256, n_batch=4)
    first, second = (f"{DEMOS['answer'][1]} {q}" for q in QUESTIONS[:2])
    llama.create_completion(first)
    reused = llama.create_completion(second)["choices"][0]["text"]
    fresh = StandInLlama("tiny.gguf", n_ctx=256, n_batch=4).create_completion(second)
    assert reused != fresh["choices"][0]["text"]


def test_a_kinds_demos_are_evaluated_once_then_restored(model: Path) -> None:
    llm = LocalLlama(model, n_ctx=256, n_threads=1, n_batch=4)
    ask(llm, "plan-tabfact", QUESTIONS[0])  # nothing seen before: all evaluated
    ask(llm, "answer", QUESTIONS[0])
    ask(llm, "plan-tabfact", QUESTIONS[1])  # shares the demos with the first: state saved
    ask(llm, "answer", QUESTIONS[1])  # the same for this kind
    stats, store = llm.reuse_stats(), llm.prefixes
    assert store is not None and store.stats().states == 2  # one per kind
    assert stats.states_saved == 2 and stats.from_states == 0
    llama = StandInLlama.instances[0]
    before = llama.evaluated
    ask(llm, "plan-tabfact", QUESTIONS[2])  # restored from its state
    prompt = word_tokens(f"{DEMOS['plan-tabfact'][1]} {QUESTIONS[2]}")
    shared = common_prefix(prompt, word_tokens(f"{DEMOS['plan-tabfact'][1]} {QUESTIONS[1]}"))
    assert llama.evaluated - before == len(prompt) - shared // 4 * 4 + 2  # and 2 generated
    assert llm.reuse_stats().from_states == 1
    assert llm.reuse_stats().tokens_evaluated < llm.reuse_stats().tokens_sent


def test_the_other_kind_of_one_call_site_keeps_its_own_state(model: Path) -> None:
    llm = LocalLlama(model, n_ctx=256, n_threads=1, n_batch=2)
    for question in QUESTIONS[:3]:
        ask(llm, "plan-tabfact", question)
        ask(llm, "plan-wikitq", question)
    held = {state.tokens[-3:] for state in llm.prefixes._states.values()}  # type: ignore[union-attr]
    assert len(held) == 2  # the two templates, not only their shared first words


def test_a_state_that_does_not_load_is_a_miss(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    llm = LocalLlama(model, n_ctx=256, n_threads=1, n_batch=2)
    fresh = LocalLlama(model, n_ctx=256, n_threads=1, n_batch=2, reuse=False)
    for question in QUESTIONS[:2]:
        ask(llm, "plan-tabfact", question)
        ask(llm, "answer", question)
    monkeypatch.setattr(sys.modules["llama_cpp"], "llama_state_seq_set_data", lambda *a: 0)
    assert ask(llm, "plan-tabfact", QUESTIONS[2]) == ask(fresh, "plan-tabfact", QUESTIONS[2])
    assert llm.reuse_stats().from_states == 0


def test_without_reuse_every_prompt_is_evaluated_whole(model: Path) -> None:
    llm = LocalLlama(model, n_ctx=256, n_threads=1, n_batch=2, reuse=False)
    for _ in range(3):
        ask(llm, "answer", QUESTIONS[0])
    whole = len(word_tokens(f"{DEMOS['answer'][1]} {QUESTIONS[0]}"))
    assert StandInLlama.instances[0].evaluated == 3 * (whole + 2)  # prompt and 2 generated
    assert llm.prefixes is None and llm.reuse_stats().tokens_evaluated == 3 * whole


# -- several contexts ---------------------------------------------------------------------


def test_busy_contexts_load_another_up_to_the_workers() -> None:
    made: list[object] = []
    pool = ContextPool(lambda: made.append(object()) or made[-1], workers=3)
    held, go = threading.Barrier(4), threading.Event()

    def hold() -> None:
        with pool.context():
            held.wait(timeout=5)
            go.wait(timeout=5)

    threads = [threading.Thread(target=hold) for _ in range(3)]
    with pool.context():
        pass  # the first context is measured, then others may load
    for t in threads:
        t.start()
    held.wait(timeout=5)  # three requests hold three contexts at once
    assert pool.loaded == 3 and pool.busy == 3
    got: list[bool] = []

    def fourth() -> None:
        with pool.context():
            got.append(go.is_set())

    waiting = threading.Thread(target=fourth)
    waiting.start()  # a fourth waits for one of the three: no fourth context
    waiting.join(timeout=0.2)
    assert got == [] and pool.loaded == 3
    go.set()
    for t in [*threads, waiting]:
        t.join(timeout=5)
    assert got == [True] and pool.loaded == 3 and pool.busy == 0


def test_the_memory_budget_caps_the_contexts() -> None:
    pool = ContextPool(object, workers=8, memory_budget_bytes=1000)
    pool.context_bytes = 300
    assert pool.allowed() == 3
    pool.context_bytes = 5000  # one context is always allowed
    assert pool.allowed() == 1


def test_threads_are_shared_among_busy_contexts(model: Path) -> None:
    llm = LocalLlama(model, n_ctx=256, n_threads=4, workers=2)
    inside, second_started = threading.Event(), threading.Event()
    seen: dict[str, int | None] = {}
    original = StandInLlama.create_completion

    def watched(self: StandInLlama, prompt: str, **options: object) -> dict:  # type: ignore[type-arg]
        seen[prompt.split()[0]] = self.threads
        if prompt.startswith("held"):
            inside.set()
            second_started.wait(timeout=5)
        if prompt.startswith("second"):
            second_started.set()
        return original(self, prompt, **options)

    StandInLlama.create_completion = watched  # type: ignore[method-assign]
    try:
        llm.complete(Request(prompt="alone", max_tokens=2))
        held = threading.Thread(target=llm.complete, args=(Request(prompt="held"),))
        held.start()
        assert inside.wait(timeout=5)
        llm.complete(Request(prompt="second"))  # while "held" keeps the first context busy
        held.join(timeout=5)
    finally:
        StandInLlama.create_completion = original  # type: ignore[method-assign]
    assert seen == {"alone": 4, "held": 4, "second": 2}
    assert len(StandInLlama.instances) == 2


@pytest.mark.parametrize("n_batch", [1, 2, 3, 4, 8])
def test_a_prompt_that_quotes_the_last_reply_is_answered_as_fresh(
    model: Path, n_batch: int
) -> None:
    """A retry's prompt holds the previous prompt and its reply: the reply's tokens were
    generated one at a time, not in the batches a fresh evaluation of them uses."""
    reusing = LocalLlama(model, n_ctx=512, n_threads=1, n_batch=n_batch)
    fresh = LocalLlama(model, n_ctx=512, n_threads=1, n_batch=n_batch, reuse=False)
    for question in QUESTIONS:
        prompt = f"{DEMOS['answer'][1]} {question}"
        for follow_up in ("answer again", "no: answer again please with more words"):
            first = Request(prompt=prompt, call_site="chain/answer", max_tokens=4)
            reply = reusing.complete(first).text
            assert reply == fresh.complete(first).text
            prompt = f"{prompt} {reply} {follow_up}"
            again = Request(prompt=prompt, call_site="chain/answer", max_tokens=4)
            assert reusing.complete(again).text == fresh.complete(again).text


def test_concurrent_requests_on_several_contexts_answer_as_fresh(model: Path) -> None:
    """Four threads share three contexts and one store of states saved by any of them."""
    from concurrent.futures import ThreadPoolExecutor

    llm = LocalLlama(model, n_ctx=256, n_threads=3, n_batch=4, workers=3)
    fresh = LocalLlama(model, n_ctx=256, n_threads=1, n_batch=4, reuse=False)
    asked = [(kind, q) for q in QUESTIONS for kind in sorted(DEMOS)] * 3
    expected = [ask(fresh, kind, q) for kind, q in asked]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda item: ask(llm, *item), asked))
    assert got == expected
    assert 1 <= llm._pool.loaded <= 3
    stats = llm.reuse_stats()
    assert stats.prompts == len(asked) and stats.from_states > 0


def test_no_more_contexts_than_threads(model: Path) -> None:
    """A context without a thread of its own only takes turns (measured: 4 contexts on one
    thread each of a busy 2-core machine gave 0.90x the questions per minute of one)."""
    from concurrent.futures import ThreadPoolExecutor

    llm = LocalLlama(model, n_ctx=256, n_threads=2, n_batch=4, workers=4)
    arrived, go = threading.Semaphore(0), threading.Event()
    original = StandInLlama.create_completion

    def held(self: StandInLlama, prompt: str, **options: object) -> dict:  # type: ignore[type-arg]
        if prompt.startswith("hold") and not go.is_set():
            arrived.release()
            go.wait(timeout=5)
        return original(self, prompt, **options)

    StandInLlama.create_completion = held  # type: ignore[method-assign]
    try:
        llm.complete(Request(prompt="first", max_tokens=2))
        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(llm.complete, Request(prompt=f"hold {i}")) for i in range(4)]
            assert arrived.acquire(timeout=5) and arrived.acquire(timeout=5)
            assert not arrived.acquire(timeout=0.2)  # the other two wait for a context
            assert llm._pool.loaded == 2
            go.set()
            for future in futures:
                future.result(timeout=5)
    finally:
        StandInLlama.create_completion = original  # type: ignore[method-assign]
    assert llm._pool.loaded == 2 and llm.workers == 4
