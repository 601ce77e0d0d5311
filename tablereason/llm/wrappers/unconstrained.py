"""Constraints off: requests go on without their constraint (``--constrain off``).

Outermost in :func:`~tablereason.llm.resolve.stack`, so the cache and usage see the request
as it was before constraints existed: its cache key is the same, nothing is sent to the
server and nothing is checked.

Example:
    >>> from tablereason.llm.backends.scripted import ScriptedLLM
    >>> from tablereason.llm.base import OneOf, Request
    >>> llm = UnconstrainedLLM(ScriptedLLM(replies=["maybe"]))
    >>> llm.complete(Request(prompt="?", constraint=OneOf(options=("yes", "no")))).text
    'maybe'
"""

from __future__ import annotations

import dataclasses

from tablereason.llm.base import Capabilities, Completion, Request, capabilities_of
from tablereason.llm.wrappers.base import LLMWrapper


def _bare(request: Request) -> Request:
    return (
        request if request.constraint is None else request.model_copy(update={"constraint": None})
    )


class UnconstrainedLLM(LLMWrapper):
    """Removes the constraint of every request before the wrapped model sees it."""

    @property
    def capabilities(self) -> Capabilities:
        """The wrapped model's, enforcing no constraint kind."""
        return dataclasses.replace(capabilities_of(self.inner), constraints=frozenset())

    def complete(self, request: Request) -> Completion:
        """Answer the request without its constraint."""
        return self.inner.complete(_bare(request))

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        return await self.inner.acomplete(_bare(request))
