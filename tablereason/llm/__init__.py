"""Language models behind one protocol, and the wrappers that compose around them.

Arranged by role: the contract (:mod:`.base`: requests, completions, capabilities; their
constraints, :mod:`.constraints`; :mod:`.errors`), :mod:`.backends` (OpenAI-compatible
servers, :class:`OpenAIChat` / :class:`OpenAICompletion`; the embedded
:class:`LocalLlama`; :class:`ScriptedLLM` for tests; all in one registry,
:data:`BACKENDS`, with their capabilities) and :mod:`.wrappers` (:class:`CachedLLM`,
:class:`RetryingLLM`, :class:`LimitedLLM`, :class:`TrackedLLM`, :class:`UnconstrainedLLM`).
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
    "NO_CAPABILITIES": "tablereason.llm.base",
    "Capabilities": "tablereason.llm.base",
    "Choice": "tablereason.llm.base",
    "Completion": "tablereason.llm.base",
    "Constraint": "tablereason.llm.base",
    "Grammar": "tablereason.llm.base",
    "JSONSchema": "tablereason.llm.base",
    "Message": "tablereason.llm.base",
    "OneOf": "tablereason.llm.base",
    "Regex": "tablereason.llm.base",
    "Request": "tablereason.llm.base",
    "SyncLLM": "tablereason.llm.base",
    "TokenLogprob": "tablereason.llm.base",
    "Usage": "tablereason.llm.base",
    "capabilities_of": "tablereason.llm.base",
    "satisfies": "tablereason.llm.constraints",
    "slot": "tablereason.llm.constraints",
    "to_gbnf": "tablereason.llm.constraints",
    "BudgetExceededError": "tablereason.llm.errors",
    "CacheMissError": "tablereason.llm.errors",
    "ConstraintError": "tablereason.llm.errors",
    "ConstraintViolationError": "tablereason.llm.errors",
    "ContextLengthError": "tablereason.llm.errors",
    "DuplicateReplyError": "tablereason.llm.errors",
    "EmptyCompletionError": "tablereason.llm.errors",
    "MalformedReplyError": "tablereason.llm.errors",
    "RetriesExhaustedError": "tablereason.llm.errors",
    "TransientLLMError": "tablereason.llm.errors",
    "is_retryable": "tablereason.llm.errors",
    "BACKENDS": "tablereason.llm.backends.registry",
    "Backend": "tablereason.llm.backends.registry",
    "ModelSpec": "tablereason.llm.backends.registry",
    "LocalLlama": "tablereason.llm.backends.embedded",
    "cache_dir": "tablereason.llm.backends.model_files",
    "default_model_path": "tablereason.llm.backends.model_files",
    "OpenAIChat": "tablereason.llm.backends.server.chat",
    "OpenAICompletion": "tablereason.llm.backends.server.chat",
    "ScriptedLLM": "tablereason.llm.backends.scripted",
    "LOCAL_MODEL": "tablereason.llm.resolve",
    "base_llm": "tablereason.llm.resolve",
    "default": "tablereason.llm.resolve",
    "resolve_llm": "tablereason.llm.resolve",
    "stack": "tablereason.llm.resolve",
    "CachedLLM": "tablereason.llm.wrappers.cache",
    "CacheStats": "tablereason.llm.wrappers.cache",
    "ResponseStore": "tablereason.llm.wrappers.cache",
    "cache_key": "tablereason.llm.wrappers.cache",
    "ConcurrencyLimit": "tablereason.llm.wrappers.limits",
    "LimitedLLM": "tablereason.llm.wrappers.limits",
    "RetryingLLM": "tablereason.llm.wrappers.retry",
    "RetryPolicy": "tablereason.llm.wrappers.retry",
    "UnconstrainedLLM": "tablereason.llm.wrappers.unconstrained",
    "REFERENCE_PRICES": "tablereason.llm.wrappers.usage",
    "Budget": "tablereason.llm.wrappers.usage",
    "Price": "tablereason.llm.wrappers.usage",
    "PriceTable": "tablereason.llm.wrappers.usage",
    "TrackedLLM": "tablereason.llm.wrappers.usage",
    "UsageSummary": "tablereason.llm.wrappers.usage",
    "UsageTracker": "tablereason.llm.wrappers.usage",
    "LLMWrapper": "tablereason.llm.wrappers.base",
}

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.backends.embedded import LocalLlama
    from tablereason.llm.backends.model_files import cache_dir, default_model_path
    from tablereason.llm.backends.registry import BACKENDS, Backend, ModelSpec
    from tablereason.llm.backends.scripted import ScriptedLLM
    from tablereason.llm.backends.server.chat import OpenAIChat, OpenAICompletion
    from tablereason.llm.base import (
        LLM,
        NO_CAPABILITIES,
        Capabilities,
        Choice,
        Completion,
        Constraint,
        Grammar,
        JSONSchema,
        Message,
        OneOf,
        Regex,
        Request,
        SyncLLM,
        TokenLogprob,
        Usage,
        capabilities_of,
    )
    from tablereason.llm.constraints import satisfies, slot, to_gbnf
    from tablereason.llm.errors import (
        BudgetExceededError,
        CacheMissError,
        ConstraintError,
        ConstraintViolationError,
        ContextLengthError,
        DuplicateReplyError,
        EmptyCompletionError,
        MalformedReplyError,
        RetriesExhaustedError,
        TransientLLMError,
        is_retryable,
    )
    from tablereason.llm.resolve import LOCAL_MODEL, base_llm, default, resolve_llm, stack
    from tablereason.llm.wrappers.base import LLMWrapper
    from tablereason.llm.wrappers.cache import CachedLLM, CacheStats, ResponseStore, cache_key
    from tablereason.llm.wrappers.limits import ConcurrencyLimit, LimitedLLM
    from tablereason.llm.wrappers.retry import RetryingLLM, RetryPolicy
    from tablereason.llm.wrappers.unconstrained import UnconstrainedLLM
    from tablereason.llm.wrappers.usage import (
        REFERENCE_PRICES,
        Budget,
        Price,
        PriceTable,
        TrackedLLM,
        UsageSummary,
        UsageTracker,
    )


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


__all__ = [
    "BACKENDS",
    "LLM",
    "LOCAL_MODEL",
    "NO_CAPABILITIES",
    "REFERENCE_PRICES",
    "Backend",
    "Budget",
    "BudgetExceededError",
    "CacheMissError",
    "CacheStats",
    "CachedLLM",
    "Capabilities",
    "Choice",
    "Completion",
    "ConcurrencyLimit",
    "Constraint",
    "ConstraintError",
    "ConstraintViolationError",
    "ContextLengthError",
    "DuplicateReplyError",
    "EmptyCompletionError",
    "Grammar",
    "JSONSchema",
    "LLMWrapper",
    "LimitedLLM",
    "LocalLlama",
    "MalformedReplyError",
    "Message",
    "ModelSpec",
    "OneOf",
    "OpenAIChat",
    "OpenAICompletion",
    "Price",
    "PriceTable",
    "Regex",
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
    "UnconstrainedLLM",
    "Usage",
    "UsageSummary",
    "UsageTracker",
    "base_llm",
    "cache_dir",
    "cache_key",
    "capabilities_of",
    "default",
    "default_model_path",
    "is_retryable",
    "resolve_llm",
    "satisfies",
    "slot",
    "stack",
    "to_gbnf",
]
