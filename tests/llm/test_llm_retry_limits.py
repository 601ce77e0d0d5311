"""Retry policy and the shared concurrency limit."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from support.fake_server import FakeSleep

from tablereason.errors import ConfigurationError, LLMError
from tablereason.llm import (
    BudgetExceededError,
    ConcurrencyLimit,
    ContextLengthError,
    LimitedLLM,
    Request,
    RetriesExhaustedError,
    RetryingLLM,
    RetryPolicy,
    ScriptedLLM,
    TransientLLMError,
)


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=10.0, jitter=0.5)
    import random

    rng = random.Random(0)
    for retry in range(6):
        cap = min(10.0, 2.0**retry)
        for _ in range(20):
            assert cap * 0.5 <= policy.delay(retry, None, rng) <= cap
    assert policy.delay(3, retry_after=7.0) == 7.0
    assert RetryPolicy(max_retry_after=5.0).delay(0, retry_after=100.0) == 5.0
    with pytest.raises(ConfigurationError):
        RetryPolicy(max_attempts=0)


@pytest.mark.parametrize(
    "error", [TransientLLMError("503", status=503), TimeoutError("t"), ConnectionResetError("r")]
)
def test_retryable_errors_are_retried(error: Exception) -> None:
    sleep = FakeSleep()
    inner = ScriptedLLM(replies=[error, error, "ok"])
    llm = RetryingLLM(inner, RetryPolicy(base_delay=0.5, jitter=0.0), sleep=sleep)
    assert llm.complete(Request(prompt="x")).text == "ok"
    assert sleep.waits == [0.5, 1.0] and len(inner.requests) == 3


@pytest.mark.parametrize(
    "error",
    [ContextLengthError("long"), BudgetExceededError("spent"), LLMError("auth"), KeyError("k")],
)
def test_other_errors_pass_through_at_once(error: Exception) -> None:
    inner = ScriptedLLM(replies=[error, "never"])
    with pytest.raises(type(error)):
        RetryingLLM(inner, sleep=FakeSleep()).complete(Request(prompt="x"))
    assert len(inner.requests) == 1


def test_exhaustion_keeps_the_last_error() -> None:
    last = TransientLLMError("still down", status=502)
    inner = ScriptedLLM(replies=[TransientLLMError("down", status=500)] * 2 + [last])
    llm = RetryingLLM(inner, RetryPolicy(max_attempts=3), sleep=FakeSleep())
    with pytest.raises(RetriesExhaustedError, match="still down") as info:
        llm.complete(Request(prompt="x"))
    assert info.value.last_error is last and info.value.__cause__ is last


def test_async_retry_uses_async_sleep() -> None:
    waits: list[float] = []

    async def asleep(seconds: float) -> None:
        waits.append(seconds)

    inner = ScriptedLLM(replies=[TransientLLMError("429", status=429, retry_after=2.0), "ok"])
    llm = RetryingLLM(inner, asleep=asleep)
    assert asyncio.run(llm.acomplete(Request(prompt="x"))).text == "ok"
    assert waits == [2.0]


class Gauge:
    """A slow model that records how many calls overlap."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.now = 0
        self.peak = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


def test_limit_holds_across_threads_and_event_loops() -> None:
    limit = ConcurrencyLimit(3)
    gauge = Gauge(0.02)

    def work(_: int) -> None:
        with limit.slot():
            gauge.enter()
            time.sleep(gauge.delay)
            gauge.leave()

    async def awork() -> None:
        async with limit.aslot():
            gauge.enter()
            await asyncio.sleep(gauge.delay)
            gauge.leave()

    async def many() -> None:
        await asyncio.gather(*(awork() for _ in range(20)))

    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(work, i) for i in range(20)]
        loops = [threading.Thread(target=asyncio.run, args=(many(),)) for _ in range(2)]
        for t in loops:
            t.start()
        for t in loops:
            t.join()
        for f in futures:
            f.result()
    assert gauge.peak == 3 and limit.in_use == 0


def test_cancelled_waiters_do_not_leak_slots() -> None:
    limit = ConcurrencyLimit(1)

    async def main() -> None:
        await limit.acquire_async()
        waiters = [asyncio.ensure_future(limit.acquire_async()) for _ in range(5)]
        await asyncio.sleep(0)
        for w in waiters[:4]:
            w.cancel()
        limit.release()
        await waiters[4]
        limit.release()
        await asyncio.gather(*waiters[:4], return_exceptions=True)

    asyncio.run(main())
    assert limit.in_use == 0
    with limit.slot():
        assert limit.in_use == 1


def test_limited_llm_shares_one_limit() -> None:
    limit = ConcurrencyLimit(2)
    gauge = Gauge(0.02)

    def fn(request: Request) -> str:
        gauge.enter()
        time.sleep(gauge.delay)
        gauge.leave()
        return "ok"

    a, b = LimitedLLM(ScriptedLLM(fn=fn), limit), LimitedLLM(ScriptedLLM(fn=fn), limit)
    with ThreadPoolExecutor(8) as pool:
        outs = list(
            pool.map(lambda i: (a if i % 2 else b).complete(Request(prompt="x")).text, range(16))
        )
    assert outs == ["ok"] * 16
    assert gauge.peak == 2
    with pytest.raises(ConfigurationError):
        ConcurrencyLimit(0)
