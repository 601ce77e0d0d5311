"""TabMWP: tabular math word problems (PromptPG / Chameleon ``problems_<split>.json``).

Each file is a JSON object keyed by problem id. ``table_for_pd`` (column -> cells)
becomes the table, ``table_title`` its caption. ``metadata`` keeps ``unit``,
``ques_type``, ``ans_type``, ``grade``, the raw text table (``table_text``), the gold
``solution`` and the table size.

Splits: ``test`` (``problems_test.json``), ``test1k``, ``dev``, ``dev1k``, ``train``
(``problems_<split>.json``).
"""

from __future__ import annotations

from pathlib import Path

from tablereason.datasets.example import Example, TableSource
from tablereason.datasets.loader import (
    DATASETS,
    DatasetFileError,
    DatasetSpec,
    read_json,
    require_fields,
)

HOW_TO_GET = (
    "Get problems_<split>.json from github.com/lupantech/chameleon-llm (data/tabmwp/) or "
    "github.com/lupantech/PromptPG with tablereason.datasets.download('tabmwp', data_dir), "
    "or point data_dir at a local copy."
)
_FIELDS = (
    "question",
    "choices",
    "answer",
    "unit",
    "table_title",
    "table_for_pd",
    "ques_type",
    "ans_type",
    "grade",
)
_ANS_TYPES = ("integer_number", "decimal_number", "extractive_text", "boolean_text", "other_text")


def _split_files(folder: Path, split: str) -> list[Path]:
    return [folder / f"problems_{split}.json"]


def _table(pid: str, record: dict[str, object], where: str) -> TableSource:
    columns = record["table_for_pd"]
    if not isinstance(columns, dict) or not columns:
        raise DatasetFileError(f"{where}: table_for_pd must be a non-empty {{column: [cells]}} map")
    lengths = {len(cells) for cells in columns.values() if isinstance(cells, list)}
    if len(lengths) != 1 or not all(isinstance(c, list) for c in columns.values()):
        raise DatasetFileError(f"{where}: every table_for_pd column must be a list of equal length")
    header = [str(name) for name in columns]
    rows = [[str(cell) for cell in row] for row in zip(*columns.values(), strict=True)]
    title = record.get("table_title")
    return TableSource(header=header, rows=rows, caption=str(title) if title else None)


def read_tabmwp(folder: Path, split: str) -> list[Example]:
    """Read ``problems_<split>.json`` from ``folder``.

    Example:
        >>> exs = read_tabmwp(Path("data/tabmwp"), "test")  # doctest: +SKIP
        >>> exs[0].metadata["ans_type"]  # doctest: +SKIP
        'integer_number'
    """
    path = SPEC.find_split_file(folder, split)
    expected = "a JSON object {pid: problem} with " + ", ".join(_FIELDS)
    data = read_json(path, expected=expected, how_to_get=HOW_TO_GET)
    if not isinstance(data, dict):
        raise DatasetFileError(f"{str(path)!r}: expected {expected}")
    examples = []
    for pid, record in data.items():
        where = f"{path} problem {pid}"
        require_fields(record, _FIELDS, where=where, expected=expected)
        if record["ans_type"] not in _ANS_TYPES:
            raise DatasetFileError(
                f"{where}: unknown ans_type {record['ans_type']!r}; expected one of {_ANS_TYPES}"
            )
        choices = record["choices"]
        examples.append(
            Example(
                dataset="tabmwp",
                id=str(pid),
                question=record["question"],
                answer=str(record["answer"]),
                choices=[str(c) for c in choices] if choices else None,
                table_source=_table(str(pid), record, where),
                metadata={
                    "unit": record["unit"],
                    "ques_type": record["ques_type"],
                    "ans_type": record["ans_type"],
                    "grade": record["grade"],
                    "table_title": record["table_title"],
                    "table_text": record.get("table"),
                    "solution": record.get("solution"),
                    "row_num": record.get("row_num"),
                    "column_num": record.get("column_num"),
                    "split": record.get("split", split),
                },
            )
        )
    return examples


SPEC = DATASETS.register(
    "tabmwp",
    DatasetSpec(
        name="tabmwp",
        description="TabMWP: math word problems over small tables (normalised accuracy)",
        splits=("test", "test1k", "dev", "dev1k", "train"),
        default_split="test",
        default_metric="tabmwp_accuracy",
        default_method="chameleon",
        reader=read_tabmwp,
        split_files=_split_files,
        how_to_get=HOW_TO_GET,
    ),
)
