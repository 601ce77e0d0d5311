"""The vote of the composed methods: normalised as the metrics compare answers, ties by rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tablereason.datasets import Example
from tablereason.methods.composed.vote import Ballot, vote
from tablereason.metrics import METRICS

FORMS = {
    "1985": ["1985", "1985.", "1985.0", " 1985 "],
    "Oslo": ["Oslo", "oslo", "OSLO.", "“Oslo”"],
    "a|b": [["a", "b"], ["B", "a"], ["b.", "A"]],
    "yes": ["yes"],
}
VALUES = list(FORMS)


def _scores_alike(one: object, other: object) -> bool:
    """Whether WikiTQ's official metric scores ``one`` right where ``other`` is the gold."""
    gold = other if isinstance(other, list) else [other]
    example = Example(dataset="wikitq", id="x", question="q", answer=[str(g) for g in gold])
    return METRICS.get("wikitq_accuracy").score_example(one, example) == 1.0


@given(st.lists(st.tuples(st.sampled_from(VALUES), st.integers(0, 3)), min_size=1, max_size=12))
def test_answers_the_metric_scores_alike_are_one_candidate(picks: list[tuple[str, int]]) -> None:
    ballots = [Ballot(FORMS[v][i % len(FORMS[v])]) for v, i in picks]
    result = vote(ballots, task="wikitq")
    counts = {v: sum(1 for p, _ in picks if p == v) for v in VALUES}
    top = max(counts.values())
    assert max(result.counts) == top and sum(result.counts) == len(picks)
    tied = [v for v in VALUES if counts[v] == top]
    # the earliest vote among the tied values wins
    first = min(tied, key=lambda v: next(n for n, (p, _) in enumerate(picks) if p == v))
    assert _scores_alike(result.winner, FORMS[first][0])
    assert result.rule == ("most votes" if len(tied) == 1 else "tie: earliest vote")


@given(st.lists(st.sampled_from(["yes", "Yes", "TRUE", "no", "false", "No."]), min_size=1))
def test_tabfact_verdicts_are_read_as_the_metric_reads_them(answers: list[str]) -> None:
    result = vote([Ballot(a) for a in answers], task="tabfact")
    yes = sum(1 for a in answers if a.lower().rstrip(".") in ("yes", "true"))
    no = len(answers) - yes
    assert sorted(result.counts, reverse=True) == sorted([c for c in (yes, no) if c], reverse=True)
    if yes != no:
        winner = "yes" if yes > no else "no"
        assert {"true": "yes", "false": "no"}.get(
            str(result.winner).lower().rstrip("."), str(result.winner).lower().rstrip(".")
        ) == winner


@given(st.lists(st.tuples(st.sampled_from(["3", "4"]), st.sampled_from(["text", "code"])),
                min_size=1, max_size=10))  # fmt: skip
def test_a_tie_goes_to_the_answer_with_more_textual_votes(picks: list[tuple[str, str]]) -> None:
    result = vote([Ballot(a, k) for a, k in picks], task="wikitq", prefer="text")
    votes = {a: sum(1 for x, _ in picks if x == a) for a in ("3", "4")}
    text = {a: sum(1 for x, k in picks if x == a and k == "text") for a in ("3", "4")}
    if votes["3"] != votes["4"]:
        assert result.winner == max(votes, key=votes.__getitem__)
    elif text["3"] != text["4"]:
        assert result.winner == max(text, key=text.__getitem__)
        assert result.rule == "tie: text preferred"
    else:
        assert result.winner == picks[0][0] and result.rule == "tie: earliest vote"


@given(st.lists(st.tuples(st.sampled_from(["yes", "No", "12", "cedar rapids", "maybe"]),
                          st.sampled_from(["text", "code"])), min_size=1, max_size=10))  # fmt: skip
def test_a_tabfact_answer_that_is_no_verdict_abstains(picks: list[tuple[str, str]]) -> None:
    result = vote([Ballot(a, k) for a, k in picks], task="tabfact", prefer="text")
    spoken = [i for i, (a, _) in enumerate(picks) if a.lower() in ("yes", "no")]
    assert result.abstained == [i for i in range(len(picks)) if i not in spoken]
    alone = vote([Ballot(*picks[i]) for i in spoken], task="tabfact", prefer="text")
    assert (result.winner, result.counts, result.rule) == (alone.winner, alone.counts, alone.rule)


def test_failed_and_empty_samples_abstain() -> None:
    result = vote([Ballot(None), Ballot(""), Ballot([" "]), Ballot("7")])
    assert result.winner == "7" and result.abstained == [0, 1, 2] and result.counts == [1]
    assert vote([Ballot(None)]).winner is None and vote([]).rule == "no votes"
    assert result.to_dict()["abstained"] == [1, 2, 3]  # numbered from 1, as the trace shows


@given(st.integers(0, 400), st.integers(1, 400))
def test_the_reported_interval_holds_the_score_and_stays_in_bounds(correct: int, n: int) -> None:
    from tablereason.evaluate.report.accuracy import wilson

    correct = min(correct, n)
    low, high = wilson(correct, n)
    assert 0.0 <= low <= correct / n <= high <= 1.0
    wider_low, wider_high = wilson(correct, n) if n == 1 else wilson(correct // 2, n // 2)
    if n >= 4 and correct % 2 == 0 and n % 2 == 0:  # the same share over half the examples
        assert wider_high - wider_low > high - low
