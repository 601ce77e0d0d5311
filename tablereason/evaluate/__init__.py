"""Evaluation: official-equivalent metrics and a concurrent, resumable runner.

The public names load on first use, so importing one submodule (the result file, the
merge, the report) does not load the whole harness (the runner, the benchmark spec,
the Ray executor). The metrics live in :mod:`tablereason.metrics` and are re-exported.

Example:
    >>> from tablereason.evaluate import METRICS
    >>> "wikitq_accuracy" in METRICS
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tablereason.lazy_names import lazy_names

# Public names that load lazily: name -> module that defines it.
_LAZY = {
    "BenchmarkSpec": "tablereason.evaluate.benchmark",
    "run_benchmark": "tablereason.evaluate.benchmark",
    "RayExecutor": "tablereason.evaluate.ray_executor",
    "Report": "tablereason.evaluate.report.page",
    "build_report": "tablereason.evaluate.report.page",
    "summarize": "tablereason.evaluate.report.page",
    "ResultFileError": "tablereason.evaluate.results",
    "RunConfig": "tablereason.evaluate.results",
    "read_results": "tablereason.evaluate.results",
    "RunSummary": "tablereason.evaluate.runner",
    "merge_results": "tablereason.evaluate.runner",
    "parse_shard": "tablereason.evaluate.runner",
    "run_evaluation": "tablereason.evaluate.runner",
    "score_results": "tablereason.evaluate.runner",
    "shard_examples": "tablereason.evaluate.runner",
    "METRICS": "tablereason.metrics.scorers",
    "GroupScore": "tablereason.metrics.scorers",
    "Metric": "tablereason.metrics.scorers",
    "MetricResult": "tablereason.metrics.scorers",
    "evaluate": "tablereason.metrics.scorers",
    "prediction_answer": "tablereason.metrics.scorers",
}

if TYPE_CHECKING:  # pragma: no cover
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


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


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
