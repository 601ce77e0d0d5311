"""Official-equivalent metrics, registered by name in :data:`METRICS`.

Every metric is a per-example scorer plus breakdown groups. Calling a metric with
predictions and the examples that were asked for gives a :class:`MetricResult`:
a missing prediction, a ``None`` answer, or a :class:`~tablereason.trace.Prediction`
with ``error`` set counts as wrong, and the denominator is always ``len(examples)``.

Registered metrics: ``wikitq_accuracy``, ``tabfact_accuracy``, ``tabmwp_accuracy``
(stricter default) and ``tabmwp_accuracy_paper``, ``scienceqa_accuracy`` and
``scienceqa_accuracy_paper`` (grade 1 left out of G1-6, as published), ``hotpotqa_em``
and ``hotpotqa_f1``.

``tabmwp_accuracy_paper`` reads each prediction's raw answer
(:attr:`~tablereason.trace.Prediction.raw_answer`, or a result record's
``raw_answer``), as the published scorer sees the program's value rather than its
text; ``tabmwp_accuracy`` computes it alongside, in :attr:`MetricResult.companions`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError
from tablereason.metrics import hotpotqa as hotpotqa_eval
from tablereason.metrics import tabmwp as tabmwp_eval
from tablereason.metrics import wikitq as wikitq_eval
from tablereason.registry import Registry

Answer = Any  # str | list[str] | float | int | bool | None
Predictions = Mapping[str, Any] | Sequence[Any]


class GroupScore(BaseModel):
    """Score of one breakdown group."""

    score: float
    n: int
    correct: float


class MetricResult(BaseModel):
    """A metric's value over a set of examples.

    Attributes:
        metric: Metric name.
        score: Mean per-example score in [0, 1] (accuracy, EM or F1).
        n: Number of examples asked for (the denominator).
        correct: Sum of per-example scores (the number correct, for accuracies).
        breakdown: Scores per group (subject, question type, grade band...).
        extra: Further dataset-level numbers (HotpotQA F1, precision, recall...).
        companions: Scores of the metric's companion metrics on the same predictions,
            by metric name (TabMWP: the published scoring).
    """

    metric: str
    score: float
    n: int
    correct: float
    breakdown: dict[str, GroupScore] = Field(default_factory=dict)
    extra: dict[str, float] = Field(default_factory=dict)
    companions: dict[str, float] = Field(default_factory=dict)

    @property
    def percent(self) -> float:
        """The score as a percentage."""
        return 100.0 * self.score

    def headline(self) -> str:
        """One line: the score, then each companion's score.

        Example:
            >>> MetricResult(metric="a", score=0.5, n=2, correct=1,
            ...              companions={"a_paper": 1.0}).headline()
            'a 50.00% · a_paper 100.00%'
        """
        parts = [f"{self.metric} {self.percent:.2f}%"]
        parts += [f"{name} {100.0 * value:.2f}%" for name, value in self.companions.items()]
        return " · ".join(parts)


def prediction_answer(prediction: Any) -> Answer:
    """The answer to score: ``None`` for a missing or failed prediction.

    Accepts a :class:`~tablereason.trace.Prediction` (or anything with ``answer`` and
    ``error`` attributes), a mapping with an ``answer`` key, or a bare answer value.
    """
    if prediction is None:
        return None
    if hasattr(prediction, "answer") and hasattr(prediction, "error"):
        return None if prediction.error else prediction.answer
    if isinstance(prediction, Mapping):
        return None if prediction.get("error") else prediction.get("answer")
    return prediction


def raw_prediction_answer(prediction: Any) -> Answer:
    """The raw answer to score: a prediction's ``raw_answer`` when it has one, else its answer.

    Accepts what :func:`prediction_answer` accepts; a result record (mapping) gives its
    ``raw_answer`` key when present. ``None`` for a missing or failed prediction.

    Example:
        >>> from tablereason.trace import Prediction
        >>> raw_prediction_answer(Prediction(answer="12", raw_answer=12.0))
        12.0
        >>> raw_prediction_answer({"answer": "12"}), raw_prediction_answer({"raw_answer": True})
        ('12', True)
    """
    if prediction is None:
        return None
    if hasattr(prediction, "has_raw_answer") and hasattr(prediction, "error"):
        if prediction.error:
            return None
        return prediction.raw_answer if prediction.has_raw_answer else prediction.answer
    if isinstance(prediction, Mapping):
        if prediction.get("error"):
            return None
        return prediction["raw_answer"] if "raw_answer" in prediction else prediction.get("answer")
    return prediction


def _read_answer(prediction: Any, example: Example) -> Answer:
    return prediction_answer(prediction)


@dataclass(frozen=True)
class Metric:
    """A named metric: a per-example scorer and the groups each example belongs to.

    Attributes:
        name: Registry name.
        description: One line for listings.
        score_example: ``(answer, example) -> float`` in [0, 1]; ``answer`` is ``None``
            for missing or failed predictions.
        groups: ``example -> group names`` for the breakdown.
        extras: Optional ``(answer, example) -> {name: value}`` averaged into ``extra``.
        read: ``(prediction, example) -> answer``: what the metric scores from a
            prediction (its ``answer``, via :func:`prediction_answer`, by default).
        companions: Names of metrics computed on the same predictions and reported in
            :attr:`MetricResult.companions`.
    """

    name: str
    description: str
    score_example: Callable[[Answer, Example], float]
    groups: Callable[[Example], Sequence[str]] = field(default=lambda example: ())
    extras: Callable[[Answer, Example], dict[str, float]] | None = None
    read: Callable[[Any, Example], Answer] = _read_answer
    companions: tuple[str, ...] = ()

    def __call__(self, predictions: Predictions, examples: Sequence[Example]) -> MetricResult:
        """Score ``predictions`` (by example id, or aligned with ``examples``).

        Example:
            >>> ex = Example(dataset="tabfact", id="a", question="q", answer="yes",
            ...              metadata={"label": 1})
            >>> METRICS.get("tabfact_accuracy")({"a": "yes"}, [ex]).score
            1.0
        """
        answers = _align(predictions, examples, self.read)
        totals: dict[str, list[float]] = {}
        extra_sums: dict[str, float] = {}
        correct = 0.0
        for answer, example in zip(answers, examples, strict=True):
            value = float(self.score_example(answer, example)) if answer is not None else 0.0
            correct += value
            for group in self.groups(example):
                bucket = totals.setdefault(group, [0.0, 0.0])
                bucket[0] += value
                bucket[1] += 1
            if self.extras is not None:
                for key, item in self.extras(answer, example).items():
                    extra_sums[key] = extra_sums.get(key, 0.0) + item
        n = len(examples)
        return MetricResult(
            metric=self.name,
            score=correct / n if n else 0.0,
            n=n,
            correct=correct,
            breakdown={
                g: GroupScore(score=c / k if k else 0.0, n=int(k), correct=c)
                for g, (c, k) in totals.items()
            },
            extra={k: v / n for k, v in extra_sums.items()} if n else {},
            companions={c: METRICS.get(c)(predictions, examples).score for c in self.companions},
        )


def _align(
    predictions: Predictions,
    examples: Sequence[Example],
    read: Callable[[Any, Example], Answer] = _read_answer,
) -> list[Answer]:
    if isinstance(predictions, Mapping):
        return [read(predictions.get(ex.id), ex) for ex in examples]
    if isinstance(predictions, (str, bytes)) or len(predictions) != len(examples):
        raise ConfigurationError(
            "predictions must be a mapping from example id to prediction, or a sequence with one "
            f"entry per example ({len(examples)}); use None for a missing prediction"
        )
    return [read(p, ex) for p, ex in zip(predictions, examples, strict=True)]


METRICS: Registry[Metric] = Registry("metric")


def evaluate(name: str, predictions: Predictions, examples: Sequence[Example]) -> MetricResult:
    """Score predictions with the metric registered as ``name``.

    Example:
        >>> ex = Example(dataset="hotpotqa", id="q", question="?", answer="the Beatles")
        >>> evaluate("hotpotqa_em", {"q": "Beatles"}, [ex]).score
        1.0
    """
    return METRICS.get(name)(predictions, examples)


# --------------------------------------------------------------------------- WikiTQ


def _items(answer: Answer) -> list[str]:
    if isinstance(answer, (list, tuple)):
        return [str(a) for a in answer]
    return [str(answer)]


def wikitq_score(answer: Answer, example: Example) -> float:
    """Official denotation match of ``answer`` (a string or list of items) against the gold."""
    canon = example.metadata.get("target_canon")
    return float(wikitq_eval.score_denotation(_items(answer), example.answers, canon))


def _wikitq_groups(example: Example) -> list[str]:
    kind = example.metadata.get("target_canon_type")
    return [f"canon_{kind}"] if kind else []


# --------------------------------------------------------------------------- TabFact


def tabfact_score(answer: Answer, example: Example) -> float:
    """Chain-of-Table's rule: lower-case; true/false become yes/no; exact yes/no vs the label."""
    if not isinstance(answer, str):
        return 0.0
    text = answer.lower()
    text = {"true": "yes", "false": "no"}.get(text, text)
    label = example.metadata.get("label", 1 if example.answer == "yes" else 0)
    return float((text == "yes" and label == 1) or (text == "no" and label == 0))


def _tabfact_groups(example: Example) -> list[str]:
    return ["entailed" if example.metadata.get("label") == 1 else "refuted"]


# --------------------------------------------------------------------------- TabMWP


def _tabmwp(paper: bool) -> Callable[[Answer, Example], float]:
    scorer = tabmwp_eval.score_paper if paper else tabmwp_eval.score_strict

    def score(answer: Answer, example: Example) -> float:
        md = example.metadata
        return float(
            scorer(answer, str(example.answer), md["ans_type"], example.choices, md.get("unit"))
        )

    return score


def tabmwp_paper_answer(prediction: Any, choices: Sequence[str] | None = None) -> Answer:
    """What the published TabMWP scorer sees for a prediction: its raw answer.

    The raw answer is :attr:`~tablereason.trace.Prediction.raw_answer` (or a result
    record's ``raw_answer``), falling back to the answer text. A missing answer on a
    multiple-choice question becomes ``""``, so the published normalisation gives it the
    first option, as the published code does; a failed or missing prediction stays None
    (wrong).

    Example:
        >>> tabmwp_paper_answer({"answer": "", "raw_answer": None}, ["yes", "no"])
        ''
        >>> tabmwp_paper_answer({"answer": "", "error": "timeout"}, ["yes", "no"]) is None
        True
    """
    if _failed(prediction):
        return None
    raw = raw_prediction_answer(prediction)
    return "" if raw is None and choices else raw


def _failed(prediction: Any) -> bool:
    """A missing prediction, or one that records an error."""
    if prediction is None:
        return True
    if isinstance(prediction, Mapping):
        return bool(prediction.get("error"))
    return bool(getattr(prediction, "error", None))


def _tabmwp_paper_read(prediction: Any, example: Example) -> Answer:
    return tabmwp_paper_answer(prediction, example.choices)


def _tabmwp_groups(example: Example) -> list[str]:
    md = example.metadata
    grade = int(md.get("grade") or 0)
    band = "grade_1_6" if 1 <= grade <= 6 else "grade_7_8" if grade in (7, 8) else None
    return [str(md.get("ques_type")), str(md.get("ans_type"))] + ([band] if band else [])


# --------------------------------------------------------------------------- ScienceQA


def scienceqa_score(answer: Answer, example: Example) -> float:
    """Chameleon's ``safe_equal``: the chosen option text, stripped and lower-cased."""
    if not isinstance(answer, str):
        return 0.0
    return float(answer.strip().lower() == str(example.answer).strip().lower())


def _scienceqa_groups(paper: bool) -> Callable[[Example], list[str]]:
    subjects = {"natural science": "nat", "social science": "soc", "language science": "lan"}

    def groups(example: Example) -> list[str]:
        md = example.metadata
        out = [subjects.get(str(md.get("subject")), str(md.get("subject")))]
        has_text = example.context != ""
        has_image = md.get("image") == "image.png"
        out += (["txt"] if has_text else []) + (["img"] if has_image else [])
        out += [] if has_text or has_image else ["no"]
        grade = int(md.get("grade_number") or str(md.get("grade", "0")).removeprefix("grade"))
        low = 2 if paper else 1  # the published script lists grade2..grade6 only
        if low <= grade <= 6:
            out.append("grade_1_6")
        elif 7 <= grade <= 12:
            out.append("grade_7_12")
        return out

    return groups


# --------------------------------------------------------------------------- HotpotQA


def hotpotqa_em(answer: Answer, example: Example) -> float:
    """Exact match after SQuAD-style normalisation."""
    return float(hotpotqa_eval.exact_match(str(answer), str(example.answer)))


def hotpotqa_f1(answer: Answer, example: Example) -> float:
    """Token F1 with the yes/no/noanswer rule."""
    return hotpotqa_eval.f1_score(str(answer), str(example.answer)).f1


def _hotpotqa_extras(answer: Answer, example: Example) -> dict[str, float]:
    if answer is None:
        return {"em": 0.0, "f1": 0.0, "precision": 0.0, "recall": 0.0}
    f1 = hotpotqa_eval.f1_score(str(answer), str(example.answer))
    return {
        "em": hotpotqa_em(answer, example),
        "f1": f1.f1,
        "precision": f1.precision,
        "recall": f1.recall,
    }


def _hotpotqa_groups(example: Example) -> list[str]:
    kind = example.metadata.get("type")
    return [str(kind)] if kind else []


for _metric in (
    Metric(
        "wikitq_accuracy",
        "WikiTQ denotation accuracy (official evaluator)",
        wikitq_score,
        _wikitq_groups,
    ),
    Metric(
        "tabfact_accuracy",
        "TabFact accuracy (Chain-of-Table yes/no rule)",
        tabfact_score,
        _tabfact_groups,
    ),
    Metric(
        "tabmwp_accuracy",
        "TabMWP accuracy, strict normalisation (published scoring alongside)",
        _tabmwp(False),
        _tabmwp_groups,
        companions=("tabmwp_accuracy_paper",),
    ),
    Metric(
        "tabmwp_accuracy_paper",
        "TabMWP accuracy, Chameleon's published normalisation of the raw answer",
        _tabmwp(True),
        _tabmwp_groups,
        read=_tabmwp_paper_read,
    ),
    Metric(
        "scienceqa_accuracy",
        "ScienceQA choice accuracy",
        scienceqa_score,
        _scienceqa_groups(paper=False),
    ),
    Metric(
        "scienceqa_accuracy_paper",
        "ScienceQA choice accuracy, published breakdowns",
        scienceqa_score,
        _scienceqa_groups(paper=True),
    ),
    Metric(
        "hotpotqa_em",
        "HotpotQA answer exact match (F1 in extra)",
        hotpotqa_em,
        _hotpotqa_groups,
        _hotpotqa_extras,
    ),
    Metric(
        "hotpotqa_f1", "HotpotQA answer token F1", hotpotqa_f1, _hotpotqa_groups, _hotpotqa_extras
    ),
):
    METRICS.register(_metric.name, _metric)
