"""Evaluation: official-equivalent metrics and a concurrent, resumable runner.

Example:
    >>> from tablereason.evaluate import METRICS
    >>> "wikitq_accuracy" in METRICS
    True
"""

from tablereason.evaluate.metrics import (
    METRICS,
    GroupScore,
    Metric,
    MetricResult,
    evaluate,
    prediction_answer,
)
from tablereason.evaluate.results import ResultFileError, RunConfig, read_results
from tablereason.evaluate.runner import (
    RunSummary,
    merge_results,
    parse_shard,
    run_evaluation,
    score_results,
    shard_examples,
)

__all__ = [
    "METRICS",
    "GroupScore",
    "Metric",
    "MetricResult",
    "ResultFileError",
    "RunConfig",
    "RunSummary",
    "evaluate",
    "merge_results",
    "parse_shard",
    "prediction_answer",
    "read_results",
    "run_evaluation",
    "score_results",
    "shard_examples",
]
