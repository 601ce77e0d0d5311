"""TabFact: table fact verification, in the Chain-of-Table jsonl layout or the official layout.

Chain-of-Table layout (``shared/data/tabfact``)::

    <split>.jsonl        statement, label (1 entailed / 0 refuted), table_caption,
                         table_text (row 0 is the header), table_id
    raw2clean.jsonl      optional: statement -> cleaned_statement (Dater's cleaning)

Official layout (github.com/wenhuchen/Table-Fact-Checking)::

    tokenized_data/<split>_examples.json   {table_id: [[statements], [labels], caption]}
    data/all_csv/<table_id>                '#'-separated table, first row is the header
    data/<subset>_id.json                  table ids of small_test, simple_test, complex_test

Each example's gold ``answer`` is ``"yes"`` (entailed) or ``"no"`` (refuted); the label is
also kept in ``metadata["label"]``. Ids are ``<table_id>:<hash of the statement>``, stable
under sub-sampling; a repeated statement on the same table gets a ``#2`` suffix.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tablereason.datasets.example import Example, TableSource
from tablereason.datasets.loader import (
    DATASETS,
    DatasetError,
    DatasetFileError,
    DatasetSpec,
    iter_jsonl,
    read_json,
    require_fields,
)

HOW_TO_GET = (
    "Get Chain-of-Table's data.zip (github.com/google-research/chain-of-table, data/tabfact/) "
    "with tablereason.datasets.download('tabfact', data_dir), or the official files from "
    "github.com/wenhuchen/Table-Fact-Checking, or point data_dir at a local copy."
)
_SUBSETS = ("small_test", "simple_test", "complex_test")
_JSONL_FIELDS = ("statement", "label", "table_caption", "table_text", "table_id")


def _official_examples_file(folder: Path, split: str) -> list[Path]:
    stem = "test" if split in _SUBSETS else split
    return [folder / "tokenized_data" / f"{stem}_examples.json", folder / f"{stem}_examples.json"]


def _split_files(folder: Path, split: str) -> list[Path]:
    return [folder / f"{split}.jsonl", *_official_examples_file(folder, split)]


class _Ids:
    """Builds stable, unique example ids."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def make(self, table_id: str, statement: str) -> str:
        digest = hashlib.sha1(statement.encode("utf-8")).hexdigest()[:10]
        base = f"{table_id}:{digest}"
        count = self.seen.get(base, 0) + 1
        self.seen[base] = count
        return base if count == 1 else f"{base}#{count}"


def _example(
    ids: _Ids,
    *,
    statement: str,
    label: Any,
    table_id: str,
    caption: str | None,
    header: list[str],
    rows: list[list[str]],
    cleaned: str,
    extra: dict[str, Any],
) -> Example:
    if label not in (0, 1):
        raise DatasetFileError(
            f"TabFact statement {statement!r} on {table_id}: label must be 0 or 1, got {label!r}"
        )
    return Example(
        dataset="tabfact",
        id=ids.make(table_id, statement),
        question=statement,
        answer="yes" if label == 1 else "no",
        table_source=TableSource(header=header, rows=rows, caption=caption),
        metadata={"label": label, "table_id": table_id, "cleaned_statement": cleaned, **extra},
    )


def _raw2clean(folder: Path) -> dict[str, str]:
    path = folder / "raw2clean.jsonl"
    if not path.is_file():
        return {}
    mapping: dict[str, str] = {}
    for number, record in iter_jsonl(path, expected="statement/cleaned_statement records"):
        require_fields(
            record,
            ("statement", "cleaned_statement"),
            where=f"{path} line {number}",
            expected="a raw2clean record",
        )
        mapping[record["statement"]] = record["cleaned_statement"]
    return mapping


def _read_jsonl(folder: Path, path: Path) -> list[Example]:
    clean = _raw2clean(folder)
    ids = _Ids()
    examples = []
    expected = "Chain-of-Table TabFact records (" + ", ".join(_JSONL_FIELDS) + ")"
    for number, record in iter_jsonl(path, expected=expected, how_to_get=HOW_TO_GET):
        where = f"{path} line {number}"
        require_fields(record, _JSONL_FIELDS, where=where, expected=expected)
        table = record["table_text"]
        if not isinstance(table, list) or not table or not all(isinstance(r, list) for r in table):
            raise DatasetFileError(f"{where}: table_text must be a non-empty list of rows")
        statement = record["statement"]
        examples.append(
            _example(
                ids,
                statement=statement,
                label=record["label"],
                table_id=record["table_id"],
                caption=record["table_caption"],
                header=[str(c) for c in table[0]],
                rows=[[str(c) for c in row] for row in table[1:]],
                cleaned=clean.get(statement, statement),
                extra={"line": number},
            )
        )
    return examples


def read_hash_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """Read an official TabFact table: ``#``-separated cells, first line is the header.

    Raises:
        DatasetError: When the file is missing.
        DatasetFileError: When a row has a different number of cells than the header.
    """
    if not path.is_file():
        raise DatasetError(
            f"missing TabFact table {str(path)!r}: expected a '#'-separated CSV in data/all_csv/. "
            f"{HOW_TO_GET}"
        )
    lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    if not lines:
        raise DatasetFileError(f"{str(path)!r} is empty; expected a header line and rows")
    header, *rows = (line.rstrip("\r").split("#") for line in lines)
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise DatasetFileError(
                f"{str(path)!r} line {number}: {len(row)} cells, header has {len(header)}"
            )
    return header, rows


def _read_official(folder: Path, path: Path, split: str) -> list[Example]:
    data = read_json(
        path, expected="{table_id: [[statements], [labels], caption]}", how_to_get=HOW_TO_GET
    )
    if not isinstance(data, dict):
        raise DatasetFileError(f"{str(path)!r}: expected a JSON object keyed by table id")
    table_ids = list(data)
    if split in _SUBSETS:
        id_file = next(
            (
                p
                for p in (folder / "data" / f"{split}_id.json", folder / f"{split}_id.json")
                if p.is_file()
            ),
            folder / "data" / f"{split}_id.json",
        )
        wanted = read_json(
            id_file, expected=f"a JSON list of {split} table ids", how_to_get=HOW_TO_GET
        )
        keep = set(wanted)
        table_ids = [t for t in table_ids if t in keep]
    csv_dir = next(
        (d for d in (folder / "data" / "all_csv", folder / "all_csv") if d.is_dir()),
        folder / "data" / "all_csv",
    )
    clean = _raw2clean(folder)
    ids = _Ids()
    examples = []
    for table_id in table_ids:
        entry = data[table_id]
        if not (isinstance(entry, list) and len(entry) >= 3 and len(entry[0]) == len(entry[1])):
            raise DatasetFileError(
                f"{str(path)!r}, table {table_id}: expected [[statements], [labels], caption] "
                "with one label per statement"
            )
        statements, labels, caption = entry[0], entry[1], entry[2]
        header, rows = read_hash_csv(csv_dir / table_id)
        for position, (statement, label) in enumerate(zip(statements, labels, strict=True)):
            examples.append(
                _example(
                    ids,
                    statement=statement,
                    label=label,
                    table_id=table_id,
                    caption=caption,
                    header=header,
                    rows=rows,
                    cleaned=clean.get(statement, statement),
                    extra={"position": position},
                )
            )
    return examples


def read_tabfact(folder: Path, split: str) -> list[Example]:
    """Read a TabFact split, preferring ``<split>.jsonl`` over the official layout.

    Example:
        >>> exs = read_tabfact(Path("data/tabfact"), "test")  # doctest: +SKIP
        >>> exs[0].answer  # doctest: +SKIP
        'yes'
    """
    path = SPEC.find_split_file(folder, split)
    if path.suffix == ".jsonl":
        return _read_jsonl(folder, path)
    return _read_official(folder, path, split)


SPEC = DATASETS.register(
    "tabfact",
    DatasetSpec(
        name="tabfact",
        description="TabFact: verify a statement against a table (yes/no accuracy)",
        splits=("test", "val", "train", *_SUBSETS),
        default_split="test",
        default_metric="tabfact_accuracy",
        default_method="chain_of_table",
        reader=read_tabfact,
        split_files=_split_files,
        how_to_get=HOW_TO_GET,
    ),
)
