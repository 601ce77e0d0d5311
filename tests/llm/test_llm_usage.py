"""Usage accounting per call site and example, prices, budgets; the scripted model."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.fake_server import FakeSleep

from tablereason.errors import ConfigurationError, LLMError
from tablereason.llm import (
    Budget,
    BudgetExceededError,
    Price,
    PriceTable,
    Request,
    RetryingLLM,
    ScriptedLLM,
    TransientLLMError,
    UsageTracker,
    stack,
)


def test_scripted_queue_function_and_recording() -> None:
    llm = ScriptedLLM(replies=["one two", ["a", "b c"], ValueError("scripted failure")])
    first = llm.complete(Request(prompt="x y z", call_site="s/1"))
    assert first.text == "one two" and first.usage.prompt_tokens == 3
    assert first.usage.completion_tokens == 2
    assert llm.complete(Request(prompt="q", n=2)).texts == ["a", "b c"]
    with pytest.raises(ValueError, match="scripted failure"):
        llm.complete(Request(prompt="q"))
    with pytest.raises(LLMError, match="ran out of replies"):
        llm.complete(Request(prompt="q"))
    assert [r.call_site for r in llm.requests][:1] == ["s/1"] and len(llm.requests) == 4
    echo = ScriptedLLM(fn=lambda r: r.as_text().upper())
    assert echo.complete(Request(prompt="hi", n=3)).texts == ["HI"] * 3
    with pytest.raises(ConfigurationError):
        ScriptedLLM()


def test_usage_by_call_site_and_scope_across_threads() -> None:
    tracker = UsageTracker()
    llm = tracker.wrap(ScriptedLLM(fn=lambda r: "w1 w2"))

    def run_example(i: int) -> None:
        with tracker.scope(f"ex{i}"):
            llm.complete(Request(prompt="p " * (i + 1), call_site="m/plan"))
            llm.complete(Request(prompt="p", call_site="m/answer"))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(run_example, range(8)))
    sites = tracker.by_call_site()
    assert sites["m/plan"].requests == 8 and sites["m/answer"].requests == 8
    assert sites["m/plan"].prompt_tokens == sum(range(1, 9))
    scopes = tracker.by_scope()
    assert scopes["ex3"].prompt_tokens == 4 + 1 and scopes["ex3"].completion_tokens == 4
    assert tracker.total().requests == 16
    assert sum(s.total_tokens for s in scopes.values()) == tracker.total().total_tokens


def test_scope_follows_asyncio_tasks() -> None:
    tracker = UsageTracker()
    llm = tracker.wrap(ScriptedLLM(fn=lambda r: "x"))

    async def example(i: int) -> None:
        with tracker.scope(f"e{i}"):
            for _ in range(i + 1):
                await llm.acomplete(Request(prompt="p"))

    async def main() -> None:
        await asyncio.gather(*(example(i) for i in range(3)))

    asyncio.run(main())
    assert {k: v.requests for k, v in tracker.by_scope().items()} == {"e0": 1, "e1": 2, "e2": 3}


def test_price_table_exact_prefix_and_unknown() -> None:
    prices = PriceTable({"gpt-4": Price(3e-5, 6e-5), "gpt-4o": Price(1e-6, 2e-6)})
    assert prices.cost("gpt-4", prompt_tokens=100, completion_tokens=10) == pytest.approx(3.6e-3)
    assert prices.price("gpt-4o-mini") == Price(1e-6, 2e-6)  # longest prefix wins
    assert prices.cost("other", prompt_tokens=100, completion_tokens=10) == 0.0


def test_retries_are_not_double_counted() -> None:
    tracker = UsageTracker(PriceTable({"scripted": Price(1.0, 1.0)}))
    flaky = ScriptedLLM(replies=[TransientLLMError("x"), TimeoutError(), "a b"])
    llm = tracker.wrap(RetryingLLM(flaky, sleep=FakeSleep()))
    llm.complete(Request(prompt="one two three"))
    total = tracker.total()
    assert (total.requests, total.prompt_tokens, total.completion_tokens) == (1, 3, 2)
    assert total.cost == 5.0 and total.billed_cost == 5.0


def test_cache_hits_count_tokens_but_not_bills(tmp_path: Path) -> None:
    tracker = UsageTracker(PriceTable({"scripted": Price(1.0, 1.0)}))
    llm = stack(ScriptedLLM(fn=lambda r: "a"), cache=tmp_path / "c.sqlite", tracker=tracker)
    for _ in range(3):
        llm.complete(Request(prompt="p q"))
    total = tracker.total()
    assert (total.requests, total.cached_requests, total.total_tokens) == (3, 2, 9)
    assert (total.cost, total.billed_cost, total.billed_tokens) == (9.0, 3.0, 3)


def test_token_budget_stops_cleanly() -> None:
    tracker = UsageTracker(budget=Budget(max_tokens=10))
    inner = ScriptedLLM(fn=lambda r: "a b c")
    llm = tracker.wrap(inner)
    llm.complete(Request(prompt="one two"))  # 5 tokens
    llm.complete(Request(prompt="one two"))  # 10 tokens: budget now spent
    with pytest.raises(BudgetExceededError, match="token budget spent: 10 of 10") as info:
        llm.complete(Request(prompt="x", call_site="m/step"))
    assert "m/step" in str(info.value) and len(inner.requests) == 2


def test_cost_budget_stops_cleanly() -> None:
    tracker = UsageTracker(PriceTable({"scripted": Price(0.5, 0.5)}), Budget(max_cost=1.0))
    llm = tracker.wrap(ScriptedLLM(fn=lambda r: "a"))
    llm.complete(Request(prompt="b"))  # $1.00
    with pytest.raises(BudgetExceededError, match="cost budget"):
        asyncio.run(llm.acomplete(Request(prompt="b")))
