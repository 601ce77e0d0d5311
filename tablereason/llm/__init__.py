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
