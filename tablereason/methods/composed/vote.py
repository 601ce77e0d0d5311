"""The vote of several answers: normalised as the task's metric compares them, ties by rule.

Answers that the metric would score alike are one candidate: WikiTQ answers are lists of
values compared as the official evaluator compares a prediction with its target
(:func:`~tablereason.metrics.wikitq.check_denotation`, both ways: the same values, in any
order, numbers by value, strings by the official normalisation); TabFact verdicts are
``yes`` or ``no`` after the metric's own reading (case, ``true``/``false``). A sample
that failed or gave an empty answer does not vote, nor does a TabFact answer that is
neither verdict (a program's number or cell text): the metric scores it wrong whatever
the gold verdict, so it can only be noise in the vote.

The winner is the candidate with the most votes. A tie is broken by the ``prefer`` kind
first (Mix-SC: the textual path's answer wins a tie, so a candidate with more votes of
that kind wins), then by the earliest vote: of the tied candidates, the one a sample
gave first (sample order is the order the samples were asked for, fixed by their
seeds, never the order they finished in).

Example:
    >>> result = vote([Ballot(["Oslo"], "text"), Ballot(["oslo."], "code"),
    ...                Ballot(["Rome"], "text")], task="wikitq")
    >>> result.winner, result.counts, result.rule
    (['Oslo'], [2, 1], 'most votes')
    >>> vote([Ballot("no", "code"), Ballot("yes", "text")], task="tabfact", prefer="text").winner
    'yes'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tablereason.metrics.wikitq import Value, check_denotation, to_value_list

Answer = str | list[str]


@dataclass(frozen=True)
class Ballot:
    """One sample's answer and the kind of path that gave it (``"text"``, ``"code"``...).

    ``answer`` is ``None`` for a sample that failed.
    """

    answer: Answer | None
    kind: str = "sample"


@dataclass
class Candidate:
    """Answers the metric scores alike: the first given stands for them."""

    answer: Answer
    key: Any
    voters: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)


@dataclass
class VoteResult:
    """The outcome of a vote.

    Attributes:
        winner: The winning answer as its first voter gave it (``None``: no votes).
        candidates: Every candidate, in the order first given.
        counts: Each candidate's votes, in the same order.
        rule: What decided: ``"most votes"``, ``"tie: <kind> preferred"``,
            ``"tie: earliest vote"`` or ``"no votes"``.
        abstained: Samples that did not vote (failed or empty).
    """

    winner: Answer | None
    candidates: list[Candidate]
    counts: list[int]
    rule: str
    abstained: list[int]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, as the vote step of a trace keeps it."""
        return {
            "winner": self.winner,
            "candidates": [
                {"answer": c.answer, "votes": len(c.voters), "samples": [v + 1 for v in c.voters]}
                for c in self.candidates
            ],
            "rule": self.rule,
            "abstained": [a + 1 for a in self.abstained],
        }


def _items(answer: Answer) -> list[str]:
    return [str(a) for a in answer] if isinstance(answer, list) else [str(answer)]


def _spoken(answer: Answer | None) -> bool:
    return answer is not None and any(item.strip() for item in _items(answer))


VERDICTS = ("yes", "no")
"""The TabFact answers that vote (as :func:`verdict` reads them)."""


def verdict(answer: Answer) -> str:
    """A TabFact answer as the metric reads it: lower-cased, ``true``/``false`` as yes/no.

    Example:
        >>> verdict("Yes"), verdict("FALSE"), verdict(["no"]), verdict("maybe")
        ('yes', 'no', 'no', 'maybe')
    """
    text = " ".join(_items(answer)).strip().lower().rstrip(".!")
    return {"true": "yes", "false": "no"}.get(text, text)


def _same(task: str, one: Any, other: Any) -> bool:
    if task == "tabfact":
        return bool(one == other)
    return check_denotation(one, other) and check_denotation(other, one)


def _key(task: str, answer: Answer) -> str | list[Value]:
    if task == "tabfact":
        return verdict(answer)
    return to_value_list([item for item in _items(answer) if item.strip()])


def vote(
    ballots: Sequence[Ballot], *, task: str = "wikitq", prefer: str | None = None
) -> VoteResult:
    """The winner of ``ballots`` under the rules of the module notes.

    Args:
        ballots: One per sample, in sample order.
        task: ``"tabfact"`` for verdicts; any other compares answers as WikiTQ's
            official evaluator does.
        prefer: A ballot kind that wins ties (Mix-SC's ``"text"``); ``None``: none.

    Example:
        >>> vote([Ballot("3"), Ballot("4"), Ballot(None)]).rule
        'tie: earliest vote'
        >>> vote([Ballot(None), Ballot(" ")]).winner is None
        True
        >>> vote([Ballot("12"), Ballot("no"), Ballot("TRUE")], task="tabfact").abstained
        [0]
    """
    candidates: list[Candidate] = []
    abstained: list[int] = []
    for number, ballot in enumerate(ballots):
        if not _spoken(ballot.answer):
            abstained.append(number)
            continue
        assert ballot.answer is not None
        key = _key(task, ballot.answer)
        if task == "tabfact" and key not in VERDICTS:
            abstained.append(number)
            continue
        found = next((c for c in candidates if _same(task, c.key, key)), None)
        if found is None:
            found = Candidate(answer=ballot.answer, key=key)
            candidates.append(found)
        found.voters.append(number)
        found.kinds.append(ballot.kind)
    counts = [len(c.voters) for c in candidates]
    if not candidates:
        return VoteResult(None, [], [], "no votes", abstained)
    top = [c for c in candidates if len(c.voters) == max(counts)]
    rule = "most votes"
    if len(top) > 1 and prefer is not None:
        most = max(c.kinds.count(prefer) for c in top)
        preferred = [c for c in top if c.kinds.count(prefer) == most]
        if len(preferred) < len(top):
            top, rule = preferred, f"tie: {prefer} preferred"
    if len(top) > 1:
        rule = "tie: earliest vote"
    winner = min(top, key=lambda c: c.voters[0])
    return VoteResult(winner.answer, candidates, counts, rule, abstained)
