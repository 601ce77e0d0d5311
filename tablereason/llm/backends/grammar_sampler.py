"""Grammar-constrained sampling that checks the grammar on the chosen token first.

llama-cpp-python puts llama.cpp's grammar sampler in its sampling chain, where it judges
every token of the vocabulary at every step (262,144 for Gemma 3: most of a constrained
token's cost). llama.cpp's own sampler (``common/sampling.cpp`` in ggml-org/llama.cpp,
``common_sampler_sample``) does less: it samples the token without the grammar, asks the
grammar about that one token, and applies the grammar to the whole candidate list only
when the token is refused; the token chosen is then accepted into the grammar's state.
:class:`LazyGrammarSampler` does the same for the embedded model.

At temperature 0 the token is the one the full grammar gives: the greedy token is the
first of the highest logits; if the grammar allows it, it is also the first of the
highest allowed logits. With a temperature, a token is drawn from the free
distribution and, when refused, drawn again from the grammar-masked one, as llama.cpp
does (the grammar-masked distribution, reached in one draw or two).

:func:`pick` holds the decision apart from llama.cpp, so that it can be checked without
a model.

Example:
    >>> pick([0.1, 2.0, 0.5], choose=max_index, allows=lambda t: t != 1,
    ...      mask=lambda logits: [x if i != 1 else float("-inf") for i, x in enumerate(logits)])
    (2, True)
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

Logits = TypeVar("Logits")
SHORTLISTS = (16, 1024, 16384)
"""Greedy decoding judges the tokens of the highest logits, this many at a time, before
masking the whole vocabulary (the grammar's cost grows with the tokens judged)."""


def max_index(logits: Sequence[float]) -> int:
    """The greedy choice: the first index of the highest logit (as llama.cpp's greedy sampler).

    Example:
        >>> max_index([1.0, 3.0, 3.0])
        1
    """
    best = 0
    for i, value in enumerate(logits):
        if value > logits[best]:
            best = i
    return best


def pick(
    logits: Logits,
    *,
    choose: Callable[[Logits], int],
    allows: Callable[[int], bool],
    mask: Callable[[Logits], Logits],
    shortlist: Callable[[Logits], int | None] | None = None,
) -> tuple[int, bool]:
    """The next token: chosen freely, and again under the grammar's mask if refused.

    Args:
        logits: The candidates' scores.
        choose: The free sampling chain (greedy, or temperature and a draw).
        allows: Whether the grammar allows one token now.
        mask: The candidates with every token the grammar refuses set to minus infinity.
        shortlist: For greedy decoding, the masked choice found without the mask when it
            can be (:func:`best_allowed`), or None.

    Returns:
        The token, and whether the free token was refused.

    Example:
        >>> pick([0.0, 1.0], choose=max_index, allows=lambda t: True, mask=list)
        (1, False)
    """
    token = choose(logits)
    if allows(token):
        return token, False
    found = shortlist(logits) if shortlist is not None else None
    if found is not None:
        return found, True
    return choose(mask(logits)), True


def best_allowed(
    logits: Any, judge: Callable[[Any], Any], sizes: Sequence[int] = SHORTLISTS
) -> int | None:
    """The greedy choice under the grammar, looked for among the highest logits first.

    For each size ``k`` in turn, the grammar judges the ``k`` tokens of highest logits at
    once; the best allowed one (the lower index first among equal logits) is the masked
    greedy choice when its logit is above the ``k``-th highest, since then every token
    that could beat it was judged. None when no size settles it: the whole vocabulary
    must be masked.

    Args:
        logits: A one-dimensional numpy array.
        judge: The grammar's verdict on an array of token ids: a boolean array, True where
            the token is allowed now.
        sizes: The shortlist sizes, smallest first.

    Example:
        >>> import numpy as np
        >>> allowed = lambda ids: np.isin(ids, [1, 3])
        >>> logits = np.array([5.0, 1.0, 4.0, 0.0, -2.0])
        >>> best_allowed(logits, allowed, sizes=(4,))
        1
        >>> best_allowed(logits, allowed, sizes=(2,)) is None  # no allowed token judged
        True
        >>> best_allowed(logits, allowed, sizes=(3,)) is None  # 1 is at the floor: unsure
        True
    """
    import numpy as np

    size = len(logits)
    for wanted in sizes:
        k = min(wanted, size)
        if k == 0:
            return None
        top = np.argpartition(-logits, k - 1)[:k] if k < size else np.arange(size)
        ok = np.asarray(judge(top), dtype=bool)
        if ok.any():
            ids = top[ok]
            values = logits[ids]
            best = values.max()
            token = int(ids[values == best].min())
            if k == size or best > logits[top].min():
                return token
        if k == size:
            return None
    return None


@dataclass
class GrammarCounts:
    """Tokens chosen under a lazy grammar.

    Attributes:
        tokens: All of them.
        refused: Those whose free choice the grammar refused.
        masked: Those for which the whole vocabulary was masked.
    """

    tokens: int = 0
    refused: int = 0
    masked: int = 0


class LazyGrammarSampler:
    """A grammar beside llama-cpp-python's free sampling chain, consulted token by token.

    It stands where llama-cpp-python keeps its sampler (``Llama._sampler``) and answers
    the same ``sample(ctx, idx)`` call.

    Args:
        chain: llama-cpp-python's sampler (``_internals.LlamaSampler``) built without the
            grammar: penalties, then greedy or temperature and a draw.
        grammar: A llama.cpp grammar sampler (``llama_sampler_init_grammar``); freed with
            this object.
        candidates: The context's candidate array (``_internals.LlamaTokenDataArray``).
        lib: The ``llama_cpp`` module.
        counts: Where the chosen and refused tokens are counted.
        greedy: Whether the chain is greedy (temperature 0): a refused token's replacement
            is then looked for among the highest logits before the whole vocabulary is
            masked.
    """

    def __init__(
        self,
        chain: Any,
        grammar: Any,
        candidates: Any,
        lib: Any,
        counts: GrammarCounts,
        *,
        greedy: bool = False,
    ) -> None:
        self.chain = chain
        self.greedy = greedy
        self.grammar = grammar
        self.candidates = candidates
        self.lib = lib
        self.counts = counts
        self._logits: Any = None
        self._masks_now = False
        self._one = lib.llama_token_data_array(
            data=ctypes.pointer(lib.llama_token_data(0, 1.0, 0.0)), size=1, selected=-1
        )

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """Choose the token at output ``idx`` of the last evaluation, and accept it."""
        import numpy as np

        lib = self.lib
        row = lib.llama_get_logits_ith(ctx.ctx, idx)
        self._logits = np.ctypeslib.as_array(row, shape=(self.candidates.n_vocab,))
        token, refused = pick(
            self._filled(),
            choose=self._choose,
            allows=self._allows,
            mask=self._masked,
            shortlist=self._shortlist if self.greedy else None,
        )
        self.counts.tokens += 1
        self.counts.refused += int(refused)
        self.counts.masked += int(self._masks_now)
        self._masks_now = False
        lib.llama_sampler_accept(self.grammar, token)
        self.chain.accept(token)
        return token

    def _filled(self) -> Any:
        """The candidate array holding this step's logits (a pointer to it)."""
        array = self.candidates
        array.copy_logits(self._logits)
        array.candidates.data = array.candidates_data.ctypes.data_as(self.lib.llama_token_data_p)
        array.candidates.selected = -1
        return ctypes.byref(array.candidates)

    def _choose(self, pointer: Any) -> int:
        self.lib.llama_sampler_apply(self.chain.sampler, pointer)
        chosen = self.candidates.candidates
        return int(chosen.data[chosen.selected].id)

    def _allows(self, token: int) -> bool:
        one = self._one
        one.data[0].id, one.data[0].logit, one.size, one.selected = token, 1.0, 1, -1
        self.lib.llama_sampler_apply(self.grammar, ctypes.byref(one))
        return not math.isinf(one.data[0].logit)

    def _shortlist(self, pointer: Any) -> int | None:
        del pointer  # judged on the logits themselves
        return best_allowed(self._logits, self._judge)

    def _judge(self, tokens: Any) -> Any:
        """The grammar's verdict on each of ``tokens`` (one call over all of them)."""
        import numpy as np

        rows = np.zeros(len(tokens), dtype=self.candidates.candidates_data.dtype)
        rows["id"] = tokens
        array = self.lib.llama_token_data_array(
            data=rows.ctypes.data_as(self.lib.llama_token_data_p),
            size=len(tokens),
            selected=-1,
            sorted=False,
        )
        self.lib.llama_sampler_apply(self.grammar, ctypes.byref(array))
        judged = rows[: int(array.size)]
        verdict = np.zeros(len(tokens), dtype=bool)
        allowed = judged["id"][np.isfinite(judged["logit"])]
        verdict[np.isin(tokens, allowed)] = True
        return verdict

    def _masked(self, pointer: Any) -> Any:
        del pointer  # the free chain may have sorted or cut it: start again from the logits
        self._masks_now = True
        again = self._filled()
        self.lib.llama_sampler_apply(self.grammar, again)
        return again

    def reset(self) -> None:
        """Forget the tokens accepted (the chain's and the grammar's state)."""
        self.chain.reset()
        self.lib.llama_sampler_reset(self.grammar)

    def close(self) -> None:
        """Free the grammar sampler (the chain frees itself)."""
        if self.grammar is not None:
            self.lib.llama_sampler_free(self.grammar)
            self.grammar = None

    def __del__(self) -> None:
        self.close()


def lazy_grammar_llama(lib: Any, counts: GrammarCounts) -> type:
    """``llama_cpp.Llama`` whose grammar is checked on the chosen token first.

    llama-cpp-python builds its sampler in ``Llama._init_sampler`` for every generation;
    this subclass builds the same chain without the grammar and puts it, with the grammar,
    in a :class:`LazyGrammarSampler`. Everything else (stop strings, log-probabilities,
    the prompt cache) is llama-cpp-python's.

    Args:
        lib: The ``llama_cpp`` module.
        counts: Shared counts of the tokens chosen under a grammar.
    """

    class LazyGrammarLlama(lib.Llama):  # type: ignore[misc,name-defined]
        def _init_sampler(self, *args: Any, grammar: Any = None, **kwargs: Any) -> Any:
            chain = super()._init_sampler(*args, grammar=None, **kwargs)
            if grammar is None:
                return chain
            sampler = lib.llama_sampler_init_grammar(
                self._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
            )
            if not sampler:
                chain.close()
                raise ValueError("llama.cpp could not parse the grammar")
            greedy = kwargs.get("temp", 0.8) == 0.0
            return LazyGrammarSampler(chain, sampler, self._candidates, lib, counts, greedy=greedy)

    return LazyGrammarLlama
