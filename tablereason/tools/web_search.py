"""Web search: an interface only. Nothing reaches the network unless a backend is given.

Example:
    >>> WebSearch()("tallest building").startswith("No evidence found: web search is not")
    True
    >>> class Canned:
    ...     def search(self, query: str, k: int) -> list[str]:
    ...         return ["Burj Khalifa is the tallest building."]
    >>> WebSearch(Canned())("tallest building")
    'Burj Khalifa is the tallest building.'
"""

from __future__ import annotations

from typing import Protocol

from tablereason.llm.base import Usage
from tablereason.tools.base import BaseTool, ToolFailure


class SearchBackend(Protocol):
    """A search engine: query to result snippets, best first. May raise on failure."""

    def search(self, query: str, k: int) -> list[str]:
        """Up to ``k`` snippets for ``query``."""
        ...


class WebSearch(BaseTool):
    """Search the web through a pluggable backend; without one, every call says so.

    Args:
        backend: The search engine; None (the default) means no network access.
        k: Snippets to join into the observation.
        name: Tool name shown to the model.
    """

    name = "Search"
    description = "Searches the web and returns the best snippets. Input: a search query."

    def __init__(
        self, backend: SearchBackend | None = None, *, k: int = 1, name: str | None = None
    ) -> None:
        self.backend = backend
        self.k = k
        if name:
            self.name = name

    def run(self, text: str) -> tuple[str, Usage]:
        """Return the top snippet(s)."""
        if self.backend is None:
            raise ToolFailure(
                "web search is not configured (no network access by default); "
                "pass a SearchBackend to WebSearch"
            )
        snippets = [s.strip() for s in self.backend.search(text, self.k) if s.strip()]
        if not snippets:
            raise ToolFailure(f"the search engine found nothing for {text!r}")
        return " ".join(snippets[: self.k]), Usage(requests=0)
