"""Token and cost accounting per call site, per example and per run, with optional budgets."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM, Completion, Request
from tablereason.llm.errors import BudgetExceededError, ConstraintViolationError
from tablereason.llm.wrappers.base import LLMWrapper


@dataclass(frozen=True)
class Price:
    """US dollars per token for prompt and completion tokens."""

    prompt: float
    completion: float


# Per-token prices used by the reference papers (ReWOO's accounting), plus local models.
REFERENCE_PRICES: dict[str, Price] = {
    "text-davinci-003": Price(2e-5, 2e-5),
    "gpt-3.5-turbo": Price(2e-6, 2e-6),
    "gpt-4": Price(3e-5, 3e-5),
    "local": Price(0.0, 0.0),
    "scripted": Price(0.0, 0.0),
}


class PriceTable:
    """Looks up a model's per-token price: exact name, else the longest matching prefix.

    Args:
        prices: Model name (or name prefix) to :class:`Price`; defaults to
            :data:`REFERENCE_PRICES`.

    Example:
        >>> round(PriceTable().cost("gpt-4-0613", prompt_tokens=1000, completion_tokens=0), 6)
        0.03
    """

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices = dict(REFERENCE_PRICES if prices is None else prices)

    def price(self, model: str, backend: str = "") -> Price | None:
        """The price for ``model`` (or for the whole ``backend``), or None when unknown."""
        if model in self.prices:
            return self.prices[model]
        prefixes = [p for p in self.prices if model.startswith(p)]
        if prefixes:
            return self.prices[max(prefixes, key=len)]
        return self.prices.get(backend)

    def cost(
        self, model: str, *, prompt_tokens: int, completion_tokens: int, backend: str = ""
    ) -> float:
        """Dollar cost of the given tokens (0.0 for models without a price)."""
        price = self.price(model, backend)
        if price is None:
            return 0.0
        return prompt_tokens * price.prompt + completion_tokens * price.completion


class UsageSummary(BaseModel):
    """Summed usage: tokens, requests, cache hits and cost.

    ``cost`` prices every token, cached or not (what the run would cost from scratch);
    ``billed_tokens`` and ``billed_cost`` only those of requests that reached a model.
    """

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    cached_requests: int = 0
    cost: float = 0.0
    billed_tokens: int = 0
    billed_cost: float = 0.0
    malformed: int = 0
    """Replies that broke their request's constraint (counted in ``requests`` too)."""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: UsageSummary) -> UsageSummary:
        return UsageSummary(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            requests=self.requests + other.requests,
            cached_requests=self.cached_requests + other.cached_requests,
            cost=self.cost + other.cost,
            billed_tokens=self.billed_tokens + other.billed_tokens,
            billed_cost=self.billed_cost + other.billed_cost,
            malformed=self.malformed + other.malformed,
        )


@dataclass(frozen=True)
class Budget:
    """Limits for one run; ``None`` means no limit.

    Both count only requests that reached a model (cache hits are free): tokens are
    prompt plus completion tokens, cost is in dollars.
    """

    max_tokens: int | None = None
    max_cost: float | None = None


_SCOPE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "tablereason_usage_scope", default=None
)


class UsageTracker:
    """Sums usage by call site and by scope (usually one scope per example) for a run.

    The scope is a context variable, so threads and asyncio tasks that each work on
    their own example attribute their calls correctly. Wrap a model with
    :meth:`wrap` (or :class:`TrackedLLM`) to record every completion it returns.

    Args:
        prices: A :class:`PriceTable` (defaults to the reference prices).
        budget: Optional limits; once spent, further requests raise
            :class:`BudgetExceededError` before reaching the model. Requests already in
            flight finish, so a run may overshoot by at most the concurrent requests.

    Example:
        >>> from tablereason.llm.backends.scripted import ScriptedLLM
        >>> tracker = UsageTracker()
        >>> llm = tracker.wrap(ScriptedLLM(replies=["yes"]))
        >>> with tracker.scope("ex-1"):
        ...     _ = llm.complete(Request(prompt="is it so", call_site="demo/verify"))
        >>> tracker.by_scope()["ex-1"].total_tokens
        4
    """

    def __init__(self, prices: PriceTable | None = None, budget: Budget | None = None) -> None:
        self.prices = prices or PriceTable()
        self.budget = budget or Budget()
        self._lock = threading.Lock()
        self._sites: dict[str, UsageSummary] = {}
        self._scopes: dict[str, UsageSummary] = {}
        self._total = UsageSummary()

    @contextmanager
    def scope(self, name: str) -> Iterator[None]:
        """Attribute every completion recorded inside the block to ``name`` (an example id)."""
        token = _SCOPE.set(name)
        try:
            yield
        finally:
            _SCOPE.reset(token)

    def check_budget(self, request: Request | None = None) -> None:
        """Raise :class:`BudgetExceededError` when the run's budget is already spent."""
        with self._lock:
            total = self._total
        site = f" (call site {request.call_site!r})" if request and request.call_site else ""
        b = self.budget
        if b.max_tokens is not None and total.billed_tokens >= b.max_tokens:
            raise BudgetExceededError(
                f"token budget spent: {total.billed_tokens} of {b.max_tokens} tokens used; "
                f"request refused{site}. Raise Budget.max_tokens or resume the run later."
            )
        if b.max_cost is not None and total.billed_cost >= b.max_cost:
            raise BudgetExceededError(
                f"cost budget spent: ${total.billed_cost:.4f} of ${b.max_cost:.4f}; "
                f"request refused{site}. Raise Budget.max_cost or resume the run later."
            )

    def record(
        self, request: Request, completion: Completion, *, malformed: bool = False
    ) -> UsageSummary:
        """Add one completion's usage under its call site and the current scope.

        ``malformed``: the completion broke the request's constraint (it was billed all
        the same).
        """
        u = completion.usage
        cost = self.prices.cost(
            completion.model,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            backend=completion.backend,
        )
        item = UsageSummary(
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            requests=1,
            cached_requests=int(completion.cached),
            cost=cost,
            billed_tokens=0 if completion.cached else u.total_tokens,
            billed_cost=0.0 if completion.cached else cost,
            malformed=int(malformed),
        )
        site = request.call_site or "(unnamed)"
        scope = _SCOPE.get()
        with self._lock:
            self._total = self._total + item
            self._sites[site] = self._sites.get(site, UsageSummary()) + item
            if scope is not None:
                self._scopes[scope] = self._scopes.get(scope, UsageSummary()) + item
        return item

    def total(self) -> UsageSummary:
        """Usage of the whole run so far."""
        with self._lock:
            return self._total

    def by_call_site(self) -> dict[str, UsageSummary]:
        """Usage per call site (``Request.call_site``; unnamed calls under ``"(unnamed)"``)."""
        with self._lock:
            return dict(self._sites)

    def by_scope(self) -> dict[str, UsageSummary]:
        """Usage per scope (example)."""
        with self._lock:
            return dict(self._scopes)

    def wrap(self, llm: LLM) -> TrackedLLM:
        """Wrap ``llm`` so its completions are recorded here (and budgets enforced)."""
        return TrackedLLM(llm, self)


class TrackedLLM(LLMWrapper):
    """Records the usage of every completion the wrapped model returns in a tracker.

    Put it outside retry wrappers: failed attempts return no completion, so nothing is
    counted twice. Cache hits are recorded with ``cached_requests`` (tokens count,
    ``billed_cost`` does not). A reply that breaks its constraint
    (:class:`~tablereason.llm.errors.ConstraintViolationError`) is recorded with
    ``malformed`` and the error passes on.

    Args:
        inner: The model to wrap.
        tracker: Where usage goes.

    Example:
        >>> from tablereason.llm.backends.scripted import ScriptedLLM
        >>> t = UsageTracker()
        >>> _ = TrackedLLM(ScriptedLLM(replies=["a"]), t).complete(Request(prompt="x"))
        >>> t.total().requests
        1
    """

    def __init__(self, inner: LLM, tracker: UsageTracker) -> None:
        super().__init__(inner)
        if not isinstance(tracker, UsageTracker):
            raise ConfigurationError("TrackedLLM needs a UsageTracker")
        self.tracker = tracker

    def complete(self, request: Request) -> Completion:
        """Answer one request and record its usage."""
        self.tracker.check_budget(request)
        try:
            completion = self.inner.complete(request)
        except ConstraintViolationError as error:
            self.tracker.record(request, error.completion, malformed=True)
            raise
        self.tracker.record(request, completion)
        return completion

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        self.tracker.check_budget(request)
        try:
            completion = await self.inner.acomplete(request)
        except ConstraintViolationError as error:
            self.tracker.record(request, error.completion, malformed=True)
            raise
        self.tracker.record(request, completion)
        return completion
