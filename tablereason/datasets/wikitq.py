"""WikiTableQuestions: the official release layout (question TSVs, tables, page metadata).

Folder layout (the release, or the sample in ``shared/data/wikitq``)::

    data/<split>.tsv          id, utterance, context, targetValue
    data/<split>.tagged       optional: same ids plus targetCanon, targetCanonType
    tagged/data/<split>.tagged  (alternative location in the release)
    csv/<N>-csv/<M>.csv       the tables (``context`` points here)
    page/<N>-page/<M>.json    page metadata; its ``title`` becomes the table caption

Split names: ``test`` (``test.tsv`` or ``pristine-unseen-tables.tsv``), ``train``
(``train.tsv`` or ``training.tsv``), and the release's other files by stem
(``pristine-seen-tables``, ``random-split-1-dev``...).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tablereason.datasets.example import Example, TableSource
from tablereason.datasets.loader import DATASETS, DatasetError, DatasetFileError, DatasetSpec

HOW_TO_GET = (
    "Get the WikiTableQuestions release (github.com/ppasupat/WikiTableQuestions, v1.0.2) with "
    "tablereason.datasets.download('wikitq', data_dir), or point data_dir at a local copy."
)

_ALIASES = {
    "test": ("test", "pristine-unseen-tables"),
    "train": ("train", "training"),
}
_RELEASE_SPLITS = (
    "pristine-unseen-tables",
    "pristine-seen-tables",
    "training",
    *(f"random-split-{i}-{part}" for i in range(1, 6) for part in ("train", "dev")),
)


def tsv_unescape(text: str) -> str:
    r"""Undo the release's TSV escapes in the order the official evaluator applies them.

    ``\n`` becomes a newline, then ``\p`` a pipe, then ``\\`` a backslash.

    Example:
        >>> tsv_unescape(r"a\pb\\c")
        'a|b\\c'
    """
    return text.replace("\\n", "\n").replace("\\p", "|").replace("\\\\", "\\")


def tsv_unescape_list(text: str) -> list[str]:
    r"""Split a ``|``-separated answer list and unescape each item.

    Example:
        >>> tsv_unescape_list(r"a|b\pc")
        ['a', 'b|c']
    """
    return [tsv_unescape(item) for item in text.split("|")]


def _split_files(folder: Path, split: str) -> list[Path]:
    return [folder / "data" / f"{stem}.tsv" for stem in _ALIASES.get(split, (split,))]


def _read_tsv(path: Path, required: tuple[str, ...]) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        lines = handle.read().split("\n")
    header = lines[0].rstrip("\r").split("\t")
    missing = [c for c in required if c not in header]
    if missing:
        raise DatasetFileError(
            f"{str(path)!r}: header lacks column(s) {', '.join(missing)}; expected a tab-separated "
            f"header with {', '.join(required)}. {HOW_TO_GET}"
        )
    records = []
    for number, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\r")
        if not line:
            continue
        cells = line.split("\t")
        if len(cells) < len(required):
            raise DatasetFileError(
                f"{str(path)!r} line {number}: {len(cells)} tab-separated fields, expected "
                f"{len(header)} ({', '.join(header)}). The file may be truncated."
            )
        records.append(dict(zip(header, cells[: len(header)], strict=False)))
    return records


def _tagged_targets(folder: Path, tsv: Path) -> dict[str, dict[str, Any]]:
    """Canonical targets from the tagged file next to ``tsv`` (empty when there is none)."""
    for path in (tsv.with_suffix(".tagged"), folder / "tagged" / "data" / f"{tsv.stem}.tagged"):
        if path.is_file():
            break
    else:
        return {}
    targets: dict[str, dict[str, Any]] = {}
    for record in _read_tsv(path, ("id", "targetValue", "targetCanon")):
        values = tsv_unescape_list(record["targetValue"])
        canon = tsv_unescape_list(record["targetCanon"])
        if len(canon) != len(values):
            raise DatasetFileError(
                f"{str(path)!r}, example {record['id']}: {len(values)} target values but "
                f"{len(canon)} canonical values; the two lists must align."
            )
        targets[record["id"]] = {
            "target_canon": canon,
            "target_canon_type": record.get("targetCanonType", ""),
        }
    return targets


def _page_title(folder: Path, context: str, cache: dict[str, str | None]) -> str | None:
    csv_path = Path(context)
    page = folder / "page" / csv_path.parent.name.replace("-csv", "-page") / f"{csv_path.stem}.json"
    key = str(page)
    if key not in cache:
        title = None
        if page.is_file():
            try:
                title = json.loads(page.read_text(encoding="utf-8")).get("title")
            except (json.JSONDecodeError, AttributeError):
                title = None
        cache[key] = title
    return cache[key]


def read_wikitq(folder: Path, split: str) -> list[Example]:
    """Read one WikiTQ split from ``folder`` (see the module docstring for the layout).

    Example:
        >>> exs = read_wikitq(Path("data/wikitq"), "test")  # doctest: +SKIP
        >>> exs[0].answer  # doctest: +SKIP
        ['January 26, 1995']
    """
    tsv = SPEC.find_split_file(folder, split)
    tagged = _tagged_targets(folder, tsv)
    titles: dict[str, str | None] = {}
    examples = []
    for record in _read_tsv(tsv, ("id", "utterance", "context", "targetValue")):
        context = record["context"]
        table_path = folder / context
        if not table_path.is_file():
            raise DatasetError(
                f"WikiTQ example {record['id']} refers to the table {str(table_path)!r}, which is "
                f"missing; the csv/ folder must sit next to data/. {HOW_TO_GET}"
            )
        caption = _page_title(folder, context, titles)
        metadata: dict[str, Any] = {
            "context": context,
            "target_value": record["targetValue"],
            "target_canon": None,
            "target_canon_type": None,
        }
        metadata.update(tagged.get(record["id"], {}))
        examples.append(
            Example(
                dataset="wikitq",
                id=record["id"],
                question=tsv_unescape(record["utterance"]),
                answer=tsv_unescape_list(record["targetValue"]),
                table_source=TableSource(path=str(table_path), caption=caption),
                metadata=metadata,
            )
        )
    return examples


SPEC = DATASETS.register(
    "wikitq",
    DatasetSpec(
        name="wikitq",
        description="WikiTableQuestions: questions over Wikipedia tables (denotation accuracy)",
        splits=("test", "train", *_RELEASE_SPLITS),
        default_split="test",
        default_metric="wikitq_accuracy",
        default_method="chain_of_table",
        reader=read_wikitq,
        split_files=_split_files,
        how_to_get=HOW_TO_GET,
    ),
)
