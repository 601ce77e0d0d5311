"""A Wikipedia-like document store over local paragraphs, searched with BM25.

Documents are titled lists of paragraphs: HotpotQA's context paragraphs (one
document per title, the default), any :class:`~tablereason.datasets.Passage`
list, or a folder of text files (title = file name, paragraphs split at blank
lines). :meth:`DocStore.search` tries an exact title first and otherwise ranks
every paragraph by BM25 over its title and text (the title counts twice).

Two tools share one :class:`DocumentExplorer`: :class:`WikiSearch` returns the best
paragraph and remembers its document, and :class:`WikiLookup` finds the next
sentence of that document that mentions a keyword.

Example:
    >>> from tablereason.datasets import Passage
    >>> store = DocStore.from_passages([
    ...     Passage(title="Ada Lovelace",
    ...             text="Ada Lovelace was a mathematician. She wrote notes."),
    ...     Passage(title="Charles Babbage", text="Babbage designed the Analytical Engine."),
    ... ])
    >>> store.search("who designed the analytical engine")[0].title
    'Charles Babbage'
    >>> explorer = DocumentExplorer(store)
    >>> WikiSearch(explorer)("Ada Lovelace")
    'Ada Lovelace: Ada Lovelace was a mathematician. She wrote notes.'
    >>> WikiLookup(explorer)("notes")
    '(Result 1/1) She wrote notes.'
"""

from __future__ import annotations

import difflib
import html
import os
import re
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from tablereason.datasets import load_dataset
from tablereason.errors import DatasetError
from tablereason.llm.base import Usage
from tablereason.tools.base import BaseTool, ToolFailure
from tablereason.tools.bm25 import BM25, tokenize

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets import Example, Passage

TITLE_WEIGHT = 2
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


class Document(BaseModel):
    """A titled article made of paragraphs."""

    model_config = ConfigDict(frozen=True)

    title: str
    paragraphs: tuple[str, ...]

    @property
    def text(self) -> str:
        """All paragraphs, separated by blank lines."""
        return "\n\n".join(self.paragraphs)

    def sentences(self) -> list[str]:
        """The document split into sentences (at ``.``, ``!`` or ``?`` before a capital)."""
        out: list[str] = []
        for paragraph in self.paragraphs:
            out.extend(s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip())
        return out


class SearchHit(BaseModel):
    """One ranked paragraph."""

    model_config = ConfigDict(frozen=True)

    title: str
    text: str
    paragraph: int
    score: float
    exact_title: bool = False


def _title_key(title: str) -> str:
    return " ".join(html.unescape(title).strip().strip("\"'").lower().split())


class DocStore:
    """Titled documents with a title index and a BM25 paragraph index.

    Args:
        documents: The documents; titles are compared case-insensitively after HTML
            unescaping, and documents with the same title are merged (paragraphs kept
            once, in order).

    Example:
        >>> store = DocStore([Document(title="Oslo", paragraphs=("Oslo is a city.",))])
        >>> store.get("oslo").title, len(store)
        ('Oslo', 1)
    """

    def __init__(self, documents: Iterable[Document]) -> None:
        merged: dict[str, tuple[str, list[str]]] = {}
        for doc in documents:
            key = _title_key(doc.title)
            _, paragraphs = merged.setdefault(key, (html.unescape(doc.title), []))
            for p in doc.paragraphs:
                p = " ".join(p.split())
                if p and p not in paragraphs:
                    paragraphs.append(p)
        self._docs = {
            key: Document(title=title, paragraphs=tuple(paras))
            for key, (title, paras) in merged.items()
            if paras
        }
        self._entries: list[tuple[str, int]] = []
        tokens: list[list[str]] = []
        for key, doc in self._docs.items():
            title_tokens = tokenize(doc.title) * TITLE_WEIGHT
            for i, paragraph in enumerate(doc.paragraphs):
                self._entries.append((key, i))
                tokens.append(title_tokens + tokenize(paragraph))
        self._index = BM25(tokens)

    # ------------------------------------------------------------------ building

    @classmethod
    def from_passages(cls, passages: Iterable[Passage]) -> DocStore:
        """One document per passage title (passages with the same title are merged)."""
        return cls(Document(title=p.title, paragraphs=(p.text,)) for p in passages)

    @classmethod
    def from_examples(cls, examples: Iterable[Example]) -> DocStore:
        """Every passage of every example (HotpotQA context paragraphs)."""
        return cls.from_passages(p for ex in examples for p in ex.passages)

    @classmethod
    def from_hotpotqa(
        cls,
        data_dir: str | os.PathLike[str] | None = None,
        split: str = "dev",
        limit: int | None = None,
    ) -> DocStore:
        """The context paragraphs of a HotpotQA split (the default Wikipedia stand-in).

        Args:
            data_dir: The data root (see :func:`tablereason.datasets.load_dataset`).
            split: HotpotQA split.
            limit: Use only the first ``limit`` questions' paragraphs.
        """
        return cls.from_examples(load_dataset("hotpotqa", split, data_dir=data_dir, limit=limit))

    @classmethod
    def from_folder(cls, folder: str | os.PathLike[str], pattern: str = "*.txt") -> DocStore:
        """One document per text file: the title is the file name (``_`` read as a space).

        Raises:
            DatasetError: If the folder does not exist or holds no matching file.
        """
        root = Path(folder)
        files = sorted(root.rglob(pattern)) if root.is_dir() else []
        if not files:
            raise DatasetError(
                f"no {pattern} files under {str(root)!r}; point the document store at a folder "
                "of text files (one article per file, paragraphs separated by blank lines)"
            )
        docs = []
        for path in files:
            text = path.read_text(encoding="utf-8", errors="replace")
            paragraphs = tuple(p for p in re.split(r"\n\s*\n", text) if p.strip())
            docs.append(Document(title=path.stem.replace("_", " "), paragraphs=paragraphs))
        return cls(docs)

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._docs)

    @property
    def num_paragraphs(self) -> int:
        """Paragraphs indexed."""
        return len(self._entries)

    def titles(self) -> list[str]:
        """Every title, in insertion order."""
        return [d.title for d in self._docs.values()]

    def get(self, title: str) -> Document | None:
        """The document with this title (case-insensitive), or None."""
        return self._docs.get(_title_key(title))

    def similar_titles(self, query: str, n: int = 5) -> list[str]:
        """Titles that look like ``query``, closest first."""
        keys = difflib.get_close_matches(_title_key(query), list(self._docs), n=n, cutoff=0.6)
        return [self._docs[k].title for k in keys]

    def search(self, query: str, k: int = 5) -> list[SearchHit]:
        """Best paragraphs for ``query``: an exact title's first paragraph, then BM25 ranks.

        Args:
            query: A title or free-text query.
            k: Paragraphs to return at most.

        Returns:
            Hits, best first; empty when no paragraph shares a word with the query.

        Example:
            >>> store = DocStore([Document(title="Oslo", paragraphs=("Capital of Norway.",))])
            >>> [h.title for h in store.search("capital norway")]
            ['Oslo']
        """
        hits: list[SearchHit] = []
        exact = self.get(query)
        if exact is not None:
            hits.append(
                SearchHit(
                    title=exact.title,
                    text=exact.paragraphs[0],
                    paragraph=0,
                    score=float("inf"),
                    exact_title=True,
                )
            )
        for index, score in self._index.top(tokenize(query), k=k + 1):
            key, paragraph = self._entries[index]
            doc = self._docs[key]
            if exact is not None and doc.title == exact.title and paragraph == 0:
                continue
            hits.append(
                SearchHit(
                    title=doc.title,
                    text=doc.paragraphs[paragraph],
                    paragraph=paragraph,
                    score=score,
                )
            )
        return hits[:k]


class DocumentExplorer:
    """Search and look-up state shared by :class:`WikiSearch` and :class:`WikiLookup`.

    Remembers the document of the last successful search, and a cursor per look-up
    term (the same term again gives the next matching sentence; a new term restarts).
    Thread-safe; :meth:`reset` forgets everything (call it between questions).

    Args:
        store: The document store.
    """

    def __init__(self, store: DocStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._document: Document | None = None
        self._term: str | None = None
        self._cursor = 0

    def reset(self) -> None:
        """Forget the last document and look-up cursor."""
        with self._lock:
            self._document, self._term, self._cursor = None, None, 0

    @property
    def document(self) -> Document | None:
        """The document of the last successful search."""
        return self._document

    def search(self, query: str) -> SearchHit:
        """The best paragraph for ``query``; its document becomes the current one.

        Raises:
            ToolFailure: When nothing matches (with similar titles, if any).
        """
        hits = self.store.search(query, k=1)
        if not hits:
            similar = self.store.similar_titles(query)
            hint = f" Similar titles: {similar}" if similar else ""
            raise ToolFailure(f"no document matches {query!r}.{hint}")
        hit = hits[0]
        with self._lock:
            self._document = self.store.get(hit.title)
            self._term, self._cursor = None, 0
        return hit

    def lookup(self, term: str) -> str:
        """``(Result k/N) sentence`` for the next sentence of the current document with ``term``.

        Raises:
            ToolFailure: Without a prior search, or when no (more) sentence matches.
        """
        with self._lock:
            doc = self._document
            if doc is None:
                raise ToolFailure("nothing to look up in; search for a document first")
            needle = term.strip().strip("\"'").lower()
            matches = [s for s in doc.sentences() if needle in s.lower()]
            if needle != self._term:
                self._term, self._cursor = needle, 0
            if not matches:
                raise ToolFailure(f"no sentence of {doc.title!r} mentions {term!r}")
            if self._cursor >= len(matches):
                raise ToolFailure(f"no more sentences of {doc.title!r} mention {term!r}")
            sentence = matches[self._cursor]
            self._cursor += 1
            return f"(Result {self._cursor}/{len(matches)}) {sentence}"


class WikiSearch(BaseTool):
    """Search the document store; the observation is ``Title: best paragraph``.

    Args:
        explorer: Shared search state (or a :class:`DocStore`, wrapped in a new explorer).
        name: Tool name shown to the model (``"Wikipedia"``; ReAct prompts use ``"Search"``).
    """

    name = "Wikipedia"
    description = (
        "Searches an encyclopedia by article title or keywords and returns the best matching "
        "paragraph. Input: an entity name or a short search query."
    )

    def __init__(self, explorer: DocumentExplorer | DocStore, *, name: str | None = None) -> None:
        self.explorer = (
            explorer if isinstance(explorer, DocumentExplorer) else DocumentExplorer(explorer)
        )
        if name:
            self.name = name

    def reset(self) -> None:
        """Forget the current document (between questions)."""
        self.explorer.reset()

    def run(self, text: str) -> tuple[str, Usage]:
        """Return the best paragraph for ``text``."""
        hit = self.explorer.search(text)
        return f"{hit.title}: {hit.text}", Usage(requests=0)


class WikiLookup(BaseTool):
    """Find the next sentence with a keyword in the document of the last search.

    Args:
        explorer: The explorer shared with a :class:`WikiSearch` tool.
        name: Tool name shown to the model.
    """

    name = "Lookup"
    description = (
        "Returns the next sentence that contains a keyword in the article found by the last "
        "search. Input: the keyword."
    )

    def __init__(self, explorer: DocumentExplorer, *, name: str | None = None) -> None:
        self.explorer = explorer
        if name:
            self.name = name

    def reset(self) -> None:
        """Forget the current document (between questions)."""
        self.explorer.reset()

    def run(self, text: str) -> tuple[str, Usage]:
        """Return ``(Result k/N) sentence``."""
        return self.explorer.lookup(text), Usage(requests=0)


def search_tools(
    store: DocStore, *, names: Sequence[str] = ("Wikipedia", "Lookup")
) -> tuple[WikiSearch, WikiLookup]:
    """A search tool and a look-up tool sharing one explorer over ``store``.

    Example:
        >>> store = DocStore([Document(title="Oslo", paragraphs=("Oslo is big.",))])
        >>> search, lookup = search_tools(store, names=("Search", "Lookup"))
        >>> search.name, lookup.explorer is search.explorer
        ('Search', True)
    """
    explorer = DocumentExplorer(store)
    return WikiSearch(explorer, name=names[0]), WikiLookup(explorer, name=names[1])
