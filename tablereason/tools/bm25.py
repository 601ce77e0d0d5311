"""A small Okapi BM25 index over tokenised texts (no dependency beyond the standard library).

Scores use the usual ``k1``/``b`` saturation and length normalisation, with the
non-negative idf ``log(1 + (N - n + 0.5) / (n + 0.5))``, so a term found in
every document still counts a little and no score is negative.

Example:
    >>> index = BM25([tokenize("the cat sat"), tokenize("dogs bark loudly")])
    >>> index.top(tokenize("a barking dog"), k=1)[0][0]
    1
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORD_TEXT = (
    "a an the of and or in on at to for by with from as is was were are be been being it its "
    "this that these those which who whom whose what when where how why did do does he she they "
    "his her their them there than then into about"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _stem(token: str) -> str:
    # A deliberately light plural/verb-ending trim, enough for "dogs"/"dog", "barking"/"bark".
    for suffix in ("ing", "s"):
        if token.endswith(suffix) and not token.endswith("ss") and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)]
    return token


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stopwords, lightly stemmed.

    Example:
        >>> tokenize("The Beatles' songs were recorded in 1963.")
        ['beatle', 'song', 'recorded', '1963']
    """
    return [_stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS and len(t) > 0]


class BM25:
    """Okapi BM25 over a fixed list of token lists.

    Args:
        documents: One token list per document.
        k1: Term-frequency saturation.
        b: Length normalisation (0 none, 1 full).

    Example:
        >>> BM25([["a", "b"], ["b", "c"]]).scores(["c"])[1] > 0
        True
    """

    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75):
        self.k1 = k1
        self.b = b
        self._tf = [Counter(doc) for doc in documents]
        self._len = [len(doc) for doc in documents]
        n = len(documents)
        self._avg = (sum(self._len) / n) if n else 0.0
        df: Counter[str] = Counter()
        for tf in self._tf:
            df.update(tf.keys())
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self._postings: dict[str, list[int]] = {}
        for i, tf in enumerate(self._tf):
            for term in tf:
                self._postings.setdefault(term, []).append(i)

    def __len__(self) -> int:
        return len(self._tf)

    def scores(self, query: Sequence[str]) -> list[float]:
        """The BM25 score of every document for ``query`` tokens."""
        out = [0.0] * len(self._tf)
        avg = self._avg or 1.0
        for term in set(query):
            idf = self._idf.get(term)
            if idf is None:
                continue
            for i in self._postings[term]:
                freq = self._tf[i][term]
                norm = self.k1 * (1 - self.b + self.b * self._len[i] / avg)
                out[i] += idf * freq * (self.k1 + 1) / (freq + norm)
        return out

    def top(self, query: Sequence[str], k: int = 5) -> list[tuple[int, float]]:
        """The ``k`` best (document index, score) pairs with a positive score, best first.

        Ties keep document order, so results are deterministic.
        """
        scored = [(i, s) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return scored[:k]
