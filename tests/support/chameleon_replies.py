"""A scripted model for Chameleon runs: one queue of replies per module.

The Chameleon tests and the evaluation tests that run Chameleon both script replies by
module, since a plan decides which modules are called and in what order.
"""

from __future__ import annotations

from collections import deque

from tablereason.errors import LLMError
from tablereason.llm import Request, ScriptedLLM


def routed(**replies: list[str]) -> ScriptedLLM:
    """A scripted model with one reply queue per module (``chameleon/<module>``).

    Args:
        **replies: Module name to the replies it gets, in order.

    Returns:
        A model that pops the next reply of the request's module, and raises
        :class:`~tablereason.errors.LLMError` when that module has none left.
    """
    queues = {site: deque(texts) for site, texts in replies.items()}

    def answer(request: Request) -> str:
        site = request.call_site.removeprefix("chameleon/")
        if not queues.get(site):
            raise LLMError(f"no scripted reply left for {site!r}")
        return queues[site].popleft()

    return ScriptedLLM(fn=answer)
