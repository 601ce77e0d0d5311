"""Response cache: keys, stats, offline replay, concurrent writers (threads, processes)."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support.fake_server import FakeOpenAIServer

from tablereason.llm import (
    CachedLLM,
    CacheMissError,
    ConstraintViolationError,
    OpenAIChat,
    Regex,
    Request,
    ResponseStore,
    ScriptedLLM,
    cache_key,
    stack,
)


def echo(request: Request) -> str:
    return f"{request.as_text()}|t={request.temperature}|s={request.seed}"


def counting(counter: list[int]) -> ScriptedLLM:
    def fn(request: Request) -> str:
        counter.append(1)
        return f"sample {len(counter)}"

    return ScriptedLLM(fn=fn)


def test_hit_after_miss_and_stats(tmp_path: Path) -> None:
    inner = ScriptedLLM(fn=echo)
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    first = llm.complete(Request(prompt="a", call_site="x"))
    again = llm.complete(Request(prompt="a", call_site="y"))  # call_site is not in the key
    assert not first.cached and again.cached
    assert again.model_copy(update={"cached": False}) == first
    assert len(inner.requests) == 1
    stats = llm.stats()
    assert (stats.hits, stats.misses, stats.entries) == (1, 1, 1)
    assert stats.hit_rate == 0.5 and stats.bytes > 0


def test_key_depends_on_backend_model_and_every_option() -> None:
    base = Request(prompt="q")
    keys = {
        cache_key("openai", "m", base),
        cache_key("local", "m", base),
        cache_key("openai", "m2", base),
        cache_key("openai", "m", base.model_copy(update={"max_tokens": 5})),
        cache_key("openai", "m", base.model_copy(update={"stop": ("\n",)})),
        cache_key("openai", "m", base.model_copy(update={"n": 2})),
    }
    assert len(keys) == 6
    assert cache_key("openai", "m", base) == cache_key("openai", "m", Request(prompt="q"))


def test_sampling_is_keyed_per_seed(tmp_path: Path) -> None:
    calls: list[int] = []
    llm = CachedLLM(counting(calls), tmp_path / "c.sqlite")
    a = llm.complete(Request(prompt="p", temperature=0.8, seed=1)).text
    b = llm.complete(Request(prompt="p", temperature=0.8, seed=2)).text
    assert a != b and len(calls) == 2
    assert llm.complete(Request(prompt="p", temperature=0.8, seed=1)).text == a
    assert len(calls) == 2


def test_unseeded_sampling_replays_in_order(tmp_path: Path) -> None:
    calls: list[int] = []
    path = tmp_path / "c.sqlite"
    rec = CachedLLM(counting(calls), path)
    req = Request(prompt="p", temperature=1.0)
    recorded = [rec.complete(req).text for _ in range(3)]
    assert len(set(recorded)) == 3  # repetitions are distinct samples, not one cached answer
    replay = CachedLLM(ScriptedLLM(replies=[]), path, offline=True)
    assert [replay.complete(req).text for _ in range(3)] == recorded
    with pytest.raises(CacheMissError):
        replay.complete(req)


@pytest.mark.parametrize("seed", [None, 3])
def test_a_reply_that_broke_its_constraint_replays_as_the_same_violation(
    tmp_path: Path, seed: int | None
) -> None:
    path = tmp_path / "c.sqlite"
    digit = Regex(pattern="[0-9]")
    first = Request(prompt="a digit?", constraint=digit, temperature=0.7, seed=seed)
    again = Request(prompt="a digit, please?", constraint=digit, temperature=0.7, seed=seed)
    live = CachedLLM(ScriptedLLM(replies=["seven", "7"]), path)
    with pytest.raises(ConstraintViolationError) as broken:
        live.complete(first)
    assert live.complete(again).text == "7"
    replay = CachedLLM(ScriptedLLM(replies=[]), path, offline=True)
    with pytest.raises(ConstraintViolationError) as replayed:  # not a cache miss
        replay.complete(first)
    assert replayed.value.completion.text == broken.value.completion.text == "seven"
    assert replayed.value.completion.cached and replayed.value.constraint == digit
    assert replay.complete(again).text == "7"


async def _replayed_violation(path: Path) -> str:
    request = Request(prompt="a digit?", constraint=Regex(pattern="[0-9]"))
    with pytest.raises(ConstraintViolationError):
        await CachedLLM(ScriptedLLM(replies=["seven"]), path).acomplete(request)
    with pytest.raises(ConstraintViolationError) as replayed:
        await CachedLLM(ScriptedLLM(replies=[]), path, offline=True).acomplete(request)
    return replayed.value.completion.text


def test_an_async_violation_is_recorded_and_replayed_too(tmp_path: Path) -> None:
    import asyncio

    assert asyncio.run(_replayed_violation(tmp_path / "c.sqlite")) == "seven"


def test_offline_replay_of_a_recorded_run_is_identical(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    requests = [
        Request(prompt=f"question {i}", n=1 + i % 3, seed=i, temperature=0.5 * (i % 2))
        for i in range(12)
    ]
    with FakeOpenAIServer() as server:
        online = stack(OpenAIChat("m", base_url=server.url), cache=path)
        recorded = [online.complete(r) for r in requests]
    # the server is gone; replay needs no model at all
    offline = stack(OpenAIChat("m", base_url="http://127.0.0.1:9/v1"), cache=path, offline=True)
    replayed = [offline.complete(r) for r in requests]
    assert all(c.cached for c in replayed)
    assert [c.model_copy(update={"cached": False}) for c in replayed] == recorded
    with pytest.raises(CacheMissError, match="offline"):
        offline.complete(Request(prompt="never asked", call_site="m/s"))


def test_concurrent_threads_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    llm = CachedLLM(ScriptedLLM(fn=echo), path)
    requests = [Request(prompt=f"r{i % 150}") for i in range(400)]  # repeats race too
    with ThreadPoolExecutor(16) as pool:
        outs = list(pool.map(llm.complete, requests))
    assert [o.text for o in outs] == [echo(r) for r in requests]
    assert len(llm.store) == 150
    assert llm.stats().hits + llm.stats().misses == 400


def _write_many(path: str, worker: int, count: int) -> int:
    llm = CachedLLM(ScriptedLLM(fn=echo), path)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(llm.complete, [Request(prompt=f"w{worker}-{i}") for i in range(count)]))
        list(pool.map(llm.complete, [Request(prompt=f"shared-{i}") for i in range(count)]))
    return llm.stats().misses


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CachedLLM(ScriptedLLM(fn=echo), path)  # create the file before the workers race
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ctx.Pool(4) as pool:
        misses = pool.starmap(_write_many, [(str(path), w, 60) for w in range(4)])
    assert sum(misses) >= 4 * 60 + 60
    conn = sqlite3.connect(path)
    keys = {row[0] for row in conn.execute("SELECT request FROM responses")}
    assert len(keys) == 4 * 60 + 60
    replay = CachedLLM(ScriptedLLM(replies=[]), path, offline=True)
    for w in range(4):
        for i in range(60):
            assert replay.complete(Request(prompt=f"w{w}-{i}")).text == f"w{w}-{i}|t=0.0|s=None"


def _open_together(path: str, barrier: Any) -> int:
    barrier.wait()
    store = ResponseStore(path)
    store.put(f"k{os.getpid()}", "b", "m", "{}", "{}")
    return len(store)


def test_processes_opening_a_new_cache_at_once_all_succeed(tmp_path: Path) -> None:
    # Shards start together and open the same, not yet existing, cache file: switching
    # it to WAL must wait for the other processes rather than fail with "locked".
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    workers = 6
    for round_ in range(8):
        path = str(tmp_path / f"new-{round_}.sqlite")
        barrier = ctx.Manager().Barrier(workers)
        with ctx.Pool(workers) as pool:
            sizes = pool.starmap(_open_together, [(path, barrier)] * workers)
        assert len(sizes) == workers and len(ResponseStore(path)) == workers


def test_async_cache(tmp_path: Path) -> None:
    import asyncio

    inner = ScriptedLLM(fn=echo)
    llm = CachedLLM(inner, tmp_path / "c.sqlite")

    async def main() -> list[bool]:
        await llm.acomplete(Request(prompt="z"))
        return [(await llm.acomplete(Request(prompt="z"))).cached]

    assert asyncio.run(main()) == [True] and len(inner.requests) == 1
