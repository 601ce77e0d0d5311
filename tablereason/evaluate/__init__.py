"""Evaluation: official-equivalent metrics and a concurrent, resumable runner.

Example:
    >>> from tablereason.evaluate import METRICS
    >>> "wikitq_accuracy" in METRICS
    True
"""

from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
from tablereason.evaluate.ray_executor import RayExecutor
from tablereason.evaluate.report.page import Report, build_report, summarize
from tablereason.evaluate.results import ResultFileError, RunConfig, read_results
from tablereason.evaluate.runner import (
    RunSummary,
    merge_results,
    parse_shard,
    run_evaluation,
    score_results,
    shard_examples,
)
from tablereason.metrics.scorers import (
    METRICS,
    GroupScore,
    Metric,
    MetricResult,
    evaluate,
    prediction_answer,
)

__all__ = [
    "METRICS",
    "BenchmarkSpec",
    "GroupScore",
    "Metric",
    "MetricResult",
    "RayExecutor",
    "Report",
    "ResultFileError",
    "RunConfig",
    "RunSummary",
    "build_report",
    "evaluate",
    "merge_results",
    "parse_shard",
    "prediction_answer",
    "read_results",
    "run_benchmark",
    "run_evaluation",
    "score_results",
    "shard_examples",
    "summarize",
]
