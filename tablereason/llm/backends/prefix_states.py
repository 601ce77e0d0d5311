"""Saved model states for the constant beginnings of prompts, found and kept within a budget.

Most of a prompt of one kind (a planning prompt, a final query) is the same for every
question: the instructions and the worked examples; only the table and the question at the
end change. The embedded model's evaluated state (its attention cache) for that shared
beginning can be saved once and restored for every later prompt that begins the same way,
instead of being evaluated again.

**How a prefix is found.** Each request names its call site (``chain_of_table/plan``, ...).
The store keeps the tokens of the last :data:`RECENT_PER_SITE` prompts of each site; the
beginning worth saving for a new prompt is the longest one it shares, token for token,
with any of them. The maximum over recent prompts, rather than one running common prefix
per site, because one site may serve several templates (TabFact and WikiTQ planning
prompts share the site and their first sentence only): a single running prefix would
shrink to that sentence as soon as the tasks alternate, while the best match among recent
prompts picks the template the new prompt belongs to. It gives the same answer as the
deepest shared node of a trie over those prompts, with no structure to keep up to date.

**Cut at batch boundaries.** llama.cpp's results depend, in the last bits, on how a
prompt is split into batches, so a state is only ever saved or restored at a multiple of
the evaluation batch (``step``, the model's ``n_batch``): the tokens after it are then
evaluated in the same batches as a fresh evaluation would use, and the completion is the
same, bit for bit. The cost is at most ``step - 1`` shared tokens evaluated again.

**Bounded.** Saved states are kept least recently used first within ``budget_bytes``
(a state costs about 13.3 kB per token for Gemma 3 270M); one larger than the whole
budget is not kept.

**On disk.** With a :class:`~tablereason.llm.backends.state_files.StateFolder` (``folder``)
every state saved is also written to a file, and a prompt that no state in memory serves
as well as a file does is served from the file (read into memory first), so a new process
starts warm.

Example:
    >>> store = PrefixStore(budget_bytes=1000, step=4)
    >>> store.note("plan", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    >>> store.wanted("plan", [1, 2, 3, 4, 5, 6, 7, 0, 0, 0])   # 7 shared, cut to 4
    4
    >>> store.add([1, 2, 3, 4], b"state")
    True
    >>> state, usable = store.best([1, 2, 3, 4, 5, 6, 7, 0, 0], limit=8)
    >>> state.tokens, usable
    ((1, 2, 3, 4), 4)
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.backends.state_files import StateFolder

RECENT_PER_SITE = 8
"""Prompts remembered per call site, to find the beginning they share."""
SITES_KEPT = 64
"""Call sites remembered (least recently seen forgotten first)."""
DEFAULT_BUDGET_MB = 256
"""Memory for saved states, in MB, unless the model is told otherwise."""
_CHUNK = 256


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two token sequences share.

    Example:
        >>> common_prefix((1, 2, 3, 4), (1, 2, 9))
        2
        >>> common_prefix((), (1,))
        0
    """
    a, b = tuple(a), tuple(b)
    n = min(len(a), len(b))
    i = 0
    while i < n:  # compare slices in C, then find the first difference in the one that differs
        j = min(n, i + _CHUNK)
        if a[i:j] != b[i:j]:
            while a[i] == b[i]:
                i += 1
            return i
        i = j
    return n


@dataclass(frozen=True)
class PrefixState:
    """The model's state after evaluating ``tokens``, as llama.cpp serialised it.

    Attributes:
        tokens: The prompt tokens the state holds (their count is a multiple of the step).
        data: The serialised state of the sequence.
    """

    tokens: tuple[int, ...]
    data: bytes

    @property
    def size(self) -> int:
        """Bytes the state takes."""
        return len(self.data)


@dataclass(frozen=True)
class PrefixStats:
    """What a store holds and did.

    Attributes:
        states: States held now.
        bytes_held: Their bytes.
        budget_bytes: The most they may take.
        saved: States added.
        restored: Times a state was handed out for a prompt.
        evicted: States dropped to stay within the budget.
        refused: States not kept because one alone exceeds the budget.
        written: States written to the folder on disk.
        loaded: States read from the folder on disk.
    """

    states: int
    bytes_held: int
    budget_bytes: int
    saved: int
    restored: int
    evicted: int
    refused: int
    written: int = 0
    loaded: int = 0


class PrefixStore:
    """Saved prefix states of one model, least recently used first, within a byte budget.

    Thread-safe: the contexts of one model (one per worker) share a store.

    Args:
        budget_bytes: The most the saved states may take together.
        step: States begin and end at multiples of this many tokens (the model's batch).
        recent: Prompts remembered per call site.
        folder: Where saved states are also kept on disk (None: in memory only).
    """

    def __init__(
        self,
        budget_bytes: int = DEFAULT_BUDGET_MB * 1_000_000,
        *,
        step: int = 128,
        recent: int = RECENT_PER_SITE,
        folder: StateFolder | None = None,
    ) -> None:
        if step < 1:
            raise ValueError(f"step must be at least 1, got {step}")
        self.budget_bytes = max(0, int(budget_bytes))
        self.step = step
        self.recent = recent
        self.folder = folder
        """The states on disk (settable until the first prompt; None: in memory only)."""
        self._states: OrderedDict[tuple[int, ...], PrefixState] = OrderedDict()
        self._sites: OrderedDict[str | None, deque[tuple[int, ...]]] = OrderedDict()
        self._bytes = 0
        counted = ("saved", "restored", "evicted", "refused", "written", "loaded")
        self._counts = dict.fromkeys(counted, 0)
        self._lock = threading.Lock()

    def cut(self, n: int) -> int:
        """``n`` rounded down to a multiple of the step.

        Example:
            >>> PrefixStore(step=128).cut(300)
            256
        """
        return max(0, n) // self.step * self.step

    def best(self, tokens: Sequence[int], limit: int) -> tuple[PrefixState | None, int]:
        """The saved state that serves the longest beginning of ``tokens``, and its length.

        A state serves the tokens it shares with the prompt, cut to the step and to
        ``limit`` (at least one prompt token must be left to evaluate). Returns
        ``(None, 0)`` when no state serves one step. Call :meth:`use` on the state
        restored.
        """
        prompt = tuple(tokens)
        with self._lock:
            found, usable = None, 0
            for state in self._states.values():
                shared = self.cut(min(limit, common_prefix(state.tokens, prompt)))
                if shared > usable:
                    found, usable = state, shared
        if self.folder is None:
            return found, usable
        on_disk, longer = None, usable
        for held in self.folder.tokens():
            shared = self.cut(min(limit, common_prefix(held, prompt)))
            if shared > longer:
                on_disk, longer = held, shared
        if on_disk is None:
            return found, usable
        data = self.folder.load(on_disk)
        if data is None:  # gone or unreadable since it was listed
            return found, usable
        state = PrefixState(on_disk, data)
        self._keep(state, count="loaded")
        return state, longer

    def use(self, state: PrefixState) -> None:
        """Count a restore of ``state`` and make it the most recently used."""
        with self._lock:
            if state.tokens in self._states:
                self._states.move_to_end(state.tokens)
            self._counts["restored"] += 1

    def covered(self, tokens: Sequence[int]) -> bool:
        """Whether a saved state already holds exactly these tokens or more."""
        prompt = tuple(tokens)
        with self._lock:
            return any(
                len(s.tokens) >= len(prompt) and s.tokens[: len(prompt)] == prompt
                for s in self._states.values()
            )

    def wanted(self, site: str | None, tokens: Sequence[int], limit: int | None = None) -> int:
        """The beginning of ``tokens`` shared with a recent prompt of ``site``, cut to the step."""
        prompt = tuple(tokens)
        end = len(prompt) if limit is None else limit
        with self._lock:
            seen = self._sites.get(site, ())
            shared = max((common_prefix(p, prompt) for p in seen), default=0)
        return self.cut(min(end, shared))

    def note(self, site: str | None, tokens: Sequence[int]) -> None:
        """Remember a prompt of ``site`` (the last :data:`RECENT_PER_SITE` are kept)."""
        prompt = tuple(tokens)
        with self._lock:
            seen = self._sites.pop(site, None) or deque(maxlen=self.recent)
            if prompt not in seen:
                seen.append(prompt)
            self._sites[site] = seen
            while len(self._sites) > SITES_KEPT:
                self._sites.popitem(last=False)

    def add(self, tokens: Sequence[int], data: bytes) -> bool:
        """Keep the state of ``tokens``; drop the least recently used beyond the budget.

        Returns:
            False when the state alone is larger than the budget (it is not kept).
        """
        state = PrefixState(tuple(tokens), bytes(data))
        if self.folder is not None and self.folder.save(state.tokens, state.data):
            with self._lock:
                self._counts["written"] += 1
        return self._keep(state, count="saved")

    def _keep(self, state: PrefixState, count: str) -> bool:
        """Hold ``state`` in memory (counted as ``count``), within the budget."""
        with self._lock:
            if state.size > self.budget_bytes:
                self._counts["refused"] += 1
                return False
            old = self._states.pop(state.tokens, None)
            if old is not None:
                self._bytes -= old.size
            self._states[state.tokens] = state
            self._bytes += state.size
            self._counts[count] += 1
            while self._bytes > self.budget_bytes:
                _, dropped = self._states.popitem(last=False)
                self._bytes -= dropped.size
                self._counts["evicted"] += 1
            return True

    def stats(self) -> PrefixStats:
        """What the store holds and did so far.

        Example:
            >>> PrefixStore(budget_bytes=10).stats().states
            0
        """
        with self._lock:
            return PrefixStats(
                states=len(self._states),
                bytes_held=self._bytes,
                budget_bytes=self.budget_bytes,
                **self._counts,
            )
