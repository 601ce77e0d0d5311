"""Base class for wrappers that compose around any :class:`~tablereason.llm.base.LLM`."""

from __future__ import annotations

from tablereason.llm.base import LLM, Capabilities, Completion, Request, capabilities_of


class LLMWrapper:
    """An LLM that delegates to ``inner``; ``name`` and ``model`` are the inner backend's.

    Wrappers stack in any order, and every layer reports the same backend name and
    model, so cache keys and usage records do not depend on how the stack was built.

    Args:
        inner: The model to wrap.

    Example:
        >>> from tablereason.llm.backends.scripted import ScriptedLLM
        >>> LLMWrapper(ScriptedLLM(replies=["hi"])).name
        'scripted'
    """

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.model: str = inner.model

    @property
    def capabilities(self) -> Capabilities:
        """The wrapped model's capabilities."""
        return capabilities_of(self.inner)

    def complete(self, request: Request) -> Completion:
        """Answer one request (pass-through)."""
        return self.inner.complete(request)

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete` (pass-through)."""
        return await self.inner.acomplete(request)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"
