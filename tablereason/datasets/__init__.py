"""Benchmark datasets read from local folders into one :class:`Example` model.

Example:
    >>> from tablereason.datasets import DATASETS
    >>> DATASETS.get("wikitq").default_metric
    'wikitq_accuracy'
"""

from tablereason.datasets import hotpotqa, scienceqa, tabfact, tabmwp, wikitq
from tablereason.datasets.download import download
from tablereason.datasets.example import Example, Passage, TableSource
from tablereason.datasets.loader import (
    DATA_DIR_ENV,
    DATASETS,
    DatasetFileError,
    DatasetSpec,
    available_datasets,
    load_dataset,
    resolve_data_dir,
)

__all__ = [
    "DATASETS",
    "DATA_DIR_ENV",
    "DatasetFileError",
    "DatasetSpec",
    "Example",
    "Passage",
    "TableSource",
    "available_datasets",
    "download",
    "hotpotqa",
    "load_dataset",
    "resolve_data_dir",
    "scienceqa",
    "tabfact",
    "tabmwp",
    "wikitq",
]
