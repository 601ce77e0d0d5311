"""Search over a local corpus of background texts: BM25 over passages, with a leave-out.

A :class:`LocalCorpus` holds titled texts (ScienceQA lectures, or the text files of
a folder). Each text is cut into passages of whole lines of about
``passage_chars`` characters, and passages are ranked with
:class:`~tablereason.tools.bm25.BM25` over their words and their text's title (the
title counted twice, as :class:`~tablereason.tools.docstore.DocStore` does).

A :class:`LeaveOut` says what one question must not read: every text of its own
skill, its own background text, any near copy of that text (word-set overlap of at
least ``max_overlap``), and any line of that text found inside another text.
:class:`LocalSearch` is the tool: the best ``k`` passages that survive the leave-out,
one after the other.

Example:
    >>> corpus = LocalCorpus([
    ...     CorpusText(title="Magnets", text="Magnets can pull or push on each other.",
    ...                skills=("Identify magnets",)),
    ...     CorpusText(title="Plants", text="Plants make their food from sunlight."),
    ... ])
    >>> LocalSearch(corpus, k=1)("do magnets push")
    'Magnets can pull or push on each other.'
    >>> LocalSearch(corpus, k=1, leave_out=LeaveOut(skill="Identify magnets"))("magnets")
    "No evidence found: nothing in the local corpus matches 'magnets'"
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tablereason.errors import DatasetError
from tablereason.llm.base import Usage
from tablereason.tools.base import BaseTool, ToolFailure
from tablereason.tools.bm25 import BM25, tokenize
from tablereason.tools.docstore import TITLE_WEIGHT

#: Word-set overlap (Jaccard) from which a text counts as a near copy of another.
NEAR_COPY = 0.5
PASSAGE_CHARS = 400
#: Share of a query's distinct words a passage must contain to be returned.
MIN_COVERAGE = 0.5
_WORD = re.compile(r"\w+")


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the lower-cased word sets of two texts (0 when either is empty).

    Example:
        >>> word_overlap("Magnets attract.", "magnets repel"), word_overlap("", "x")
        (0.3333333333333333, 0.0)
    """
    left, right = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def passages(text: str, max_chars: int = PASSAGE_CHARS) -> list[str]:
    r"""Cut a text into passages of whole lines, each at most ``max_chars`` long.

    A line longer than ``max_chars`` is a passage of its own; blank lines are dropped.

    Example:
        >>> passages("one\ntwo\n\nthree", max_chars=8)
        ['one\ntwo', 'three']
    """
    out: list[str] = []
    current: list[str] = []
    size = 0
    for line in (" ".join(raw.split()) for raw in text.splitlines()):
        if not line:
            continue
        if current and size + 1 + len(line) > max_chars:
            out.append("\n".join(current))
            current, size = [], 0
        size += len(line) + (1 if current else 0)
        current.append(line)
    if current:
        out.append("\n".join(current))
    return out


class CorpusText(BaseModel):
    """One background text.

    Attributes:
        title: A short title (ScienceQA: the skill or skills the lecture belongs to).
        text: The text; its lines are kept.
        skills: The skills the text was written for (for :class:`LeaveOut`).
        sources: Where it came from (problem ids, or the file path).
    """

    model_config = ConfigDict(frozen=True)

    title: str
    text: str
    skills: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


class LeaveOut(BaseModel):
    """What one question must not read from the corpus.

    Attributes:
        skill: The question's skill: every text written for it is hidden.
        text: The question's own background text: it and every near copy are hidden.
        max_overlap: Word-set overlap with ``text`` from which a text is a near copy.

    Example:
        >>> rule = LeaveOut(skill="Use guide words", text="Guide words are at the top.")
        >>> rule.hides(CorpusText(title="t", text="Guide words are at the top!"))
        True
        >>> rule.hides(CorpusText(title="t", text="Plants need light."))
        False
    """

    model_config = ConfigDict(frozen=True)

    skill: str | None = None
    text: str = ""
    max_overlap: float = NEAR_COPY

    def hides(self, item: CorpusText) -> bool:
        """Whether ``item`` is hidden from the question."""
        if self.skill and self.skill in item.skills:
            return True
        return bool(self.text.strip()) and word_overlap(self.text, item.text) >= self.max_overlap


class Passage(BaseModel):
    """One ranked passage of a corpus text."""

    model_config = ConfigDict(frozen=True)

    title: str
    text: str
    source: int
    score: float


class LocalCorpus:
    """Background texts cut into passages and indexed with BM25.

    Args:
        texts: The texts; identical texts (after whitespace normalisation) are merged,
            keeping every title, skill and source.
        description: What the corpus holds, for messages and run records.
        passage_chars: Passage length in characters (whole lines).

    Example:
        >>> corpus = LocalCorpus([CorpusText(title="Oslo", text="Oslo is in Norway.")])
        >>> [p.text for p in corpus.search("where is oslo")]
        ['Oslo is in Norway.']
    """

    def __init__(
        self,
        texts: Iterable[CorpusText],
        *,
        description: str = "",
        passage_chars: int = PASSAGE_CHARS,
    ) -> None:
        merged: dict[str, tuple[CorpusText, dict[str, None], dict[str, None], dict[str, None]]] = {}
        for item in texts:
            key = " ".join(item.text.split())
            if not key:
                continue
            _, titles, skills, sources = merged.setdefault(key, (item, {}, {}, {}))
            titles.update(dict.fromkeys(item.title.split("; ")))
            skills.update(dict.fromkeys(item.skills))
            sources.update(dict.fromkeys(item.sources))
        self.texts: list[CorpusText] = [
            CorpusText(
                title="; ".join(titles),
                text=first.text,
                skills=tuple(skills),
                sources=tuple(sources),
            )
            for first, titles, skills, sources in merged.values()
        ]
        self._words = [frozenset(_WORD.findall(item.text.lower())) for item in self.texts]
        self.description = description or f"{len(self.texts)} local texts"
        self._passages: list[tuple[int, str]] = []
        tokens: list[list[str]] = []
        for index, item in enumerate(self.texts):
            title_tokens = tokenize(item.title) * TITLE_WEIGHT
            for passage in passages(item.text, passage_chars):
                self._passages.append((index, passage))
                tokens.append(title_tokens + tokenize(passage))
        self._terms = [frozenset(t) for t in tokens]
        self._index = BM25(tokens)

    @classmethod
    def from_folder(
        cls, folder: str | os.PathLike[str], patterns: tuple[str, ...] = ("*.txt", "*.md")
    ) -> LocalCorpus:
        """One text per file under ``folder`` (recursively); the title is the file name.

        Raises:
            DatasetError: If the folder does not exist or holds no matching file.

        Example:
            >>> import pathlib, tempfile
            >>> folder = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (folder / "Magnet_poles.txt").write_text("Magnets have two poles.")
            >>> LocalCorpus.from_folder(folder).texts[0].title
            'Magnet poles'
        """
        root = Path(folder)
        files = (
            sorted({p for pattern in patterns for p in root.rglob(pattern)})
            if (root.is_dir())
            else []
        )
        if not files:
            raise DatasetError(
                f"no {' or '.join(patterns)} files under {str(root)!r}; a search corpus folder "
                "holds one text file per article"
            )
        texts = [
            CorpusText(
                title=path.stem.replace("_", " "),
                text=path.read_text(encoding="utf-8", errors="replace"),
                sources=(str(path),),
            )
            for path in files
        ]
        return cls(texts, description=f"{len(files)} text files under {str(root)!r}")

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def num_passages(self) -> int:
        """Passages indexed."""
        return len(self._passages)

    def hidden(self, leave_out: LeaveOut | None) -> set[int]:
        """Indices of the texts ``leave_out`` hides."""
        if leave_out is None:
            return set()
        hidden = {i for i, item in enumerate(self.texts) if leave_out.skill in item.skills}
        own = frozenset(_WORD.findall(leave_out.text.lower()))
        if own:
            for i, words in enumerate(self._words):
                if words and len(own & words) / len(own | words) >= leave_out.max_overlap:
                    hidden.add(i)
        return hidden

    def search(
        self,
        query: str,
        k: int = 3,
        leave_out: LeaveOut | None = None,
        *,
        min_coverage: float = MIN_COVERAGE,
    ) -> list[Passage]:
        """The ``k`` best passages for ``query`` among the texts ``leave_out`` leaves visible.

        A passage must contain (in its text or title) at least ``min_coverage`` of the
        query's distinct words, so one common word ("capital", "below") is not enough
        to return an unrelated passage.

        Lines that also occur in the leave-out's own text (ignoring case and spacing)
        are cut from the passages returned, so a sentence of the question's own
        background never comes back, even from a text written for another skill.

        Returns:
            Passages, best first, each text once; ties keep corpus order. Empty when no
            visible passage shares a word with the query.
        """
        hidden = self.hidden(leave_out)
        own_lines = set(_lines(leave_out.text)) if leave_out is not None else set()
        terms = set(tokenize(query))
        needed = max(1, math.ceil(min_coverage * len(terms)))
        scores = self._index.scores(list(terms))
        ranked = sorted(
            (
                i
                for i, s in enumerate(scores)
                if s > 0
                and self._passages[i][0] not in hidden
                and len(terms & self._terms[i]) >= needed
            ),
            key=lambda i: (-scores[i], i),
        )
        out: list[Passage] = []
        seen: set[str] = set()
        for i in ranked:
            source, text = self._passages[i]
            if own_lines:
                text = "\n".join(
                    line for line in text.splitlines() if _line_key(line) not in own_lines
                )
            if text and text not in seen:
                seen.add(text)
                title = self.texts[source].title
                out.append(Passage(title=title, text=text, source=source, score=scores[i]))
            if len(out) == k:
                break
        return out


def _line_key(line: str) -> str:
    return " ".join(line.lower().split())


def _lines(text: str) -> list[str]:
    return [key for key in map(_line_key, text.splitlines()) if key]


class LocalSearch(BaseTool):
    """Search a local corpus; the observation is the best passages, one per line.

    Args:
        corpus: The corpus, or a function that returns it (called on the first search,
            so a corpus that is never searched is never built). A
            :class:`~tablereason.errors.DatasetError` from it becomes a "No evidence
            found" observation that says what is missing.
        k: Passages to return at most.
        leave_out: What the current question must not read.
        name: Tool name shown to the model.
        published: Return the passages as a Python list literal of one-line strings,
            the form Chameleon's published search module shows the model
            (``['first passage', 'second passage']``); otherwise one passage after
            another, lines kept.
    """

    name = "Search"
    description = (
        "Searches a local collection of background texts and returns the best passages. "
        "Input: a search query."
    )

    def __init__(
        self,
        corpus: LocalCorpus | Callable[[], LocalCorpus],
        *,
        k: int = 3,
        leave_out: LeaveOut | None = None,
        name: str | None = None,
        published: bool = False,
    ) -> None:
        self._corpus = corpus
        self.k = k
        self.leave_out = leave_out
        self.published = published
        if name:
            self.name = name

    @property
    def corpus(self) -> LocalCorpus:
        """The corpus (built on first use when given as a function)."""
        if not isinstance(self._corpus, LocalCorpus):
            try:
                self._corpus = self._corpus()
            except DatasetError as error:
                raise ToolFailure(f"no local search corpus: {error}") from None
        return self._corpus

    def run(self, text: str) -> tuple[str, Usage]:
        """Return the best passages for ``text``."""
        hits = self.corpus.search(text, self.k, self.leave_out)
        if not hits:
            raise ToolFailure(f"nothing in the local corpus matches {text.strip()!r}")
        if self.published:
            return repr([" ".join(hit.text.split()) for hit in hits]), Usage(requests=0)
        return "\n".join(hit.text for hit in hits), Usage(requests=0)
