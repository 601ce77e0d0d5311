"""Language models behind one protocol, and the wrappers that compose around them.

Backends: :class:`OpenAIChat` / :class:`OpenAICompletion` (OpenAI or any compatible
server), :class:`LocalLlama` (embedded llama.cpp), :class:`ScriptedLLM` (tests).
Wrappers: :class:`CachedLLM` (persistent cache and offline replay),
:class:`RetryingLLM`, :class:`LimitedLLM`, :class:`TrackedLLM` (usage and budgets).
:func:`default` picks a backend from the environment; :func:`stack` wraps it;
:func:`base_llm` and :func:`resolve_llm` turn a model spec (``"local"``, a ``.gguf``
path, a server's model name) into a backend, bare or wrapped.

Importing this package loads neither ``openai`` nor ``llama_cpp``.

Example:
    >>> from tablereason.llm import Request, ScriptedLLM, UsageTracker, stack
    >>> tracker = UsageTracker()
    >>> llm = stack(ScriptedLLM(replies=["Paris"]), tracker=tracker)
    >>> llm.complete(Request(prompt="Capital of France?", call_site="demo")).text
    'Paris'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tablereason.lazy_names import lazy_names

# Public names load on first use (name -> defining module), so that a module that needs one
# piece (the trace needs ``Usage``) does not load every backend and wrapper.
_LAZY = {
    "LLM": "tablereason.llm.base",
    "Choice": "tablereason.llm.base",
    "Completion": "tablereason.llm.base",
    "Message": "tablereason.llm.base",
    "Request": "tablereason.llm.base",
    "SyncLLM": "tablereason.llm.base",
    "TokenLogprob": "tablereason.llm.base",
    "Usage": "tablereason.llm.base",
    "CachedLLM": "tablereason.llm.cache",
    "CacheStats": "tablereason.llm.cache",
    "ResponseStore": "tablereason.llm.cache",
    "cache_key": "tablereason.llm.cache",
    "BudgetExceededError": "tablereason.llm.errors",
    "CacheMissError": "tablereason.llm.errors",
    "ContextLengthError": "tablereason.llm.errors",
    "DuplicateReplyError": "tablereason.llm.errors",
    "EmptyCompletionError": "tablereason.llm.errors",
    "MalformedReplyError": "tablereason.llm.errors",
    "RetriesExhaustedError": "tablereason.llm.errors",
    "TransientLLMError": "tablereason.llm.errors",
    "is_retryable": "tablereason.llm.errors",
    "ConcurrencyLimit": "tablereason.llm.limits",
    "LimitedLLM": "tablereason.llm.limits",
    "LocalLlama": "tablereason.llm.local",
    "cache_dir": "tablereason.llm.model_files",
    "default_model_path": "tablereason.llm.model_files",
    "OpenAIChat": "tablereason.llm.openai_backend",
    "OpenAICompletion": "tablereason.llm.openai_backend",
    "LOCAL_MODEL": "tablereason.llm.resolve",
    "base_llm": "tablereason.llm.resolve",
    "resolve_llm": "tablereason.llm.resolve",
    "RetryingLLM": "tablereason.llm.retry",
    "RetryPolicy": "tablereason.llm.retry",
    "ScriptedLLM": "tablereason.llm.scripted",
    "default": "tablereason.llm.selection",
    "stack": "tablereason.llm.selection",
    "REFERENCE_PRICES": "tablereason.llm.usage",
    "Budget": "tablereason.llm.usage",
    "Price": "tablereason.llm.usage",
    "PriceTable": "tablereason.llm.usage",
    "TrackedLLM": "tablereason.llm.usage",
    "UsageSummary": "tablereason.llm.usage",
    "UsageTracker": "tablereason.llm.usage",
    "LLMWrapper": "tablereason.llm.wrapping",
}

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.base import (
        LLM,
        Choice,
        Completion,
        Message,
        Request,
        SyncLLM,
        TokenLogprob,
        Usage,
    )
    from tablereason.llm.cache import CachedLLM, CacheStats, ResponseStore, cache_key
    from tablereason.llm.errors import (
        BudgetExceededError,
        CacheMissError,
        ContextLengthError,
        DuplicateReplyError,
        EmptyCompletionError,
        MalformedReplyError,
        RetriesExhaustedError,
        TransientLLMError,
        is_retryable,
    )
    from tablereason.llm.limits import ConcurrencyLimit, LimitedLLM
    from tablereason.llm.local import LocalLlama
    from tablereason.llm.model_files import cache_dir, default_model_path
    from tablereason.llm.openai_backend import OpenAIChat, OpenAICompletion
    from tablereason.llm.resolve import LOCAL_MODEL, base_llm, resolve_llm
    from tablereason.llm.retry import RetryingLLM, RetryPolicy
    from tablereason.llm.scripted import ScriptedLLM
    from tablereason.llm.selection import default, stack
    from tablereason.llm.usage import (
        REFERENCE_PRICES,
        Budget,
        Price,
        PriceTable,
        TrackedLLM,
        UsageSummary,
        UsageTracker,
    )
    from tablereason.llm.wrapping import LLMWrapper


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


__all__ = [
    "LLM",
    "LOCAL_MODEL",
    "REFERENCE_PRICES",
    "Budget",
    "BudgetExceededError",
    "CacheMissError",
    "CacheStats",
    "CachedLLM",
    "Choice",
    "Completion",
    "ConcurrencyLimit",
    "ContextLengthError",
    "DuplicateReplyError",
    "EmptyCompletionError",
    "LLMWrapper",
    "LimitedLLM",
    "LocalLlama",
    "MalformedReplyError",
    "Message",
    "OpenAIChat",
    "OpenAICompletion",
    "Price",
    "PriceTable",
    "Request",
    "ResponseStore",
    "RetriesExhaustedError",
    "RetryPolicy",
    "RetryingLLM",
    "ScriptedLLM",
    "SyncLLM",
    "TokenLogprob",
    "TrackedLLM",
    "TransientLLMError",
    "Usage",
    "UsageSummary",
    "UsageTracker",
    "base_llm",
    "cache_dir",
    "cache_key",
    "default",
    "default_model_path",
    "is_retryable",
    "resolve_llm",
    "stack",
]
