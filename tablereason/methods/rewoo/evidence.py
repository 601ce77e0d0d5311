r"""Bounding ReWOO evidence: keep the sentences that bear on a query, within a length.

A retrieved paragraph is usually far longer than the fact a step needs. The
default profile passes evidence on (to a later tool's input, and to the solver)
through :func:`focus`: the first sentence (it names the subject), then the other
sentences that share the most content words with the query, in their original
order, until the character budget is spent. Gaps are marked with ``...``. Short
evidence is returned unchanged, so an LLM-tool answer is never touched.

Example:
    >>> text = ("Greene King: Greene King is a brewer. It was founded in 1799. "
    ...         "It is based in Bury St Edmunds, Suffolk.")
    >>> focus(text, "In which town is Greene King based?", 90)
    'Greene King: Greene King is a brewer. ... It is based in Bury St Edmunds, Suffolk.'
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.methods.rewoo.parse import PlanStep

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])")
_WORD = re.compile(r"[^\W_]+", re.U)
_GAP = " ..."
_STOPWORD_TEXT = """a an and are as at be been by did do does for from given had has have he
her his how in into is it its of on or she that the their them they this to was were what when
where which who whom whose why will with context answer question find look up"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` that carry meaning (no stopwords, no one-letter words).

    Example:
        >>> sorted(content_words("Who founded the city of Oslo?"))
        ['city', 'founded', 'oslo']
    """
    words = (w.lower() for w in _WORD.findall(text))
    return {w for w in words if len(w) > 1 and w not in _STOPWORDS}


def sentences(text: str) -> list[str]:
    """``text`` split after ``.``, ``!`` or ``?`` when a new sentence seems to start.

    Example:
        >>> sentences("It rains. Oslo is wet! Is it? yes.")
        ['It rains.', 'Oslo is wet!', 'Is it? yes.']
    """
    return [s for s in (p.strip() for p in _SENTENCE_END.split(" ".join(text.split()))) if s]


def focus(text: str, query: str, limit: int | None) -> str:
    """At most ``limit`` characters of ``text``: its first sentence and those closest to ``query``.

    Args:
        text: The evidence (whitespace is collapsed).
        query: What the evidence is for: the question, or the tool input around it.
        limit: The character budget; None keeps the whole text.

    Returns:
        ``text`` itself when it fits; otherwise the chosen sentences in their original
        order, with `` ...`` where sentences were left out (or at a cut inside a
        sentence that alone is longer than the budget).
    """
    flat = " ".join(text.split())
    if limit is None or len(flat) <= limit:
        return flat
    parts = sentences(flat)
    wanted = content_words(query)
    overlap = [len(wanted & content_words(part)) for part in parts]
    ranked = sorted(range(1, len(parts)), key=lambda i: (-overlap[i], i))
    chosen = [0]
    for index in ranked:
        if not overlap[index]:
            break
        if len(_join(parts, sorted([*chosen, index]))) <= limit:
            chosen = sorted([*chosen, index])
    out = _join(parts, chosen)
    if len(out) > limit:  # the first sentence alone is over budget: cut at a word
        out = out[: limit - len(_GAP)].rsplit(" ", 1)[0].rstrip() + _GAP
    return out


def _join(parts: list[str], chosen: list[int]) -> str:
    """The chosen sentences in order, with ``...`` wherever sentences were left out."""
    out = ""
    for position, index in enumerate(chosen):
        if position and chosen[position - 1] != index - 1:
            out += _GAP
        out += (" " if out else "") + parts[index]
    return out + (_GAP if chosen[-1] != len(parts) - 1 else "")


def worker_log(
    steps: list[PlanStep], evidence: dict[str, str], question: str, limit: int | None
) -> str:
    """What the default solver reads: each plan and its evidence, focused on the question.

    Args:
        steps: The plan's evidence steps, in plan order.
        evidence: Evidence text by variable (a missing one reads "No evidence found").
        question: The task text; with each step's plan, what the evidence is focused on.
        limit: Characters of evidence per step (None: whole).

    Example:
        >>> from tablereason.methods.rewoo.parse import PlanStep
        >>> print(worker_log([PlanStep(var="#E1", plan="Add.")], {"#E1": "5"}, "2 + 3?", 40))
        Plan: Add.
        Evidence: 5
        <BLANKLINE>
    """
    if not steps:
        return "(No plan could be read, so there is no evidence.)\n"
    parts = []
    for step in steps:
        text = focus(evidence.get(step.var, "No evidence found"), f"{question} {step.plan}", limit)
        parts.append(f"Plan: {step.plan}\nEvidence: {text}\n")
    return "".join(parts)
