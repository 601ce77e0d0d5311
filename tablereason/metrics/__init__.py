"""The official scorers, used by methods and the evaluation harness alike.

``scorers`` holds :data:`METRICS` and the per-dataset scores; ``wikitq``, ``tabmwp`` and
``hotpotqa`` reproduce those datasets' official evaluators.
"""

from tablereason.metrics.scorers import (
    METRICS,
    GroupScore,
    Metric,
    MetricResult,
    evaluate,
    prediction_answer,
)

__all__ = ["METRICS", "GroupScore", "Metric", "MetricResult", "evaluate", "prediction_answer"]
