"""Dataset registry, data-folder resolution and the shared file readers.

Every dataset module registers a :class:`DatasetSpec` in :data:`DATASETS`.
:func:`load_dataset` resolves the data folder (argument, then the
``TABLEREASON_DATA_DIR`` environment variable), finds the dataset's own folder
inside it and calls the dataset's reader. Nothing is ever downloaded here; see
:mod:`tablereason.datasets.download` for the explicit download helper.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError, DatasetError
from tablereason.registry import Registry

DATA_DIR_ENV = "TABLEREASON_DATA_DIR"


class DatasetFileError(DatasetError, ValueError):
    """A dataset file exists but does not have the expected format."""


@dataclass(frozen=True)
class DatasetSpec:
    """What a dataset is and how to read it.

    Attributes:
        name: Registry name and default folder name (``"wikitq"``).
        description: One line for listings.
        splits: Split names the reader knows.
        default_split: Split used when none is given.
        default_metric: Metric name in :data:`tablereason.evaluate.METRICS`.
        default_method: Method the paper used on this dataset.
        reader: ``reader(folder, split) -> list[Example]``; ``folder`` is the dataset folder.
        split_files: ``split_files(folder, split)``: candidate files for a split, first existing
            one wins; used to find the dataset folder and to list local splits.
        how_to_get: Sentence telling the user how to obtain the files.
        split_lister: Optional ``split_lister(folder)`` listing local splits, for datasets whose
            splits are not one file each.
    """

    name: str
    description: str
    splits: tuple[str, ...]
    default_split: str
    default_metric: str
    default_method: str
    reader: Callable[[Path, str], list[Example]]
    split_files: Callable[[Path, str], list[Path]]
    how_to_get: str = field(default="")
    split_lister: Callable[[Path], list[str]] | None = None

    def local_splits(self, folder: Path) -> list[str]:
        """Splits whose files exist under ``folder``."""
        if self.split_lister is not None:
            return self.split_lister(folder)
        return [s for s in self.splits if any(p.is_file() for p in self.split_files(folder, s))]

    def find_split_file(self, folder: Path, split: str) -> Path:
        """The first existing file for ``split``, or a :class:`DatasetError` naming the candidates.

        Raises:
            DatasetError: When no candidate exists.
        """
        candidates = self.split_files(folder, split)
        for path in candidates:
            if path.is_file():
                return path
        tried = ", ".join(str(p) for p in candidates)
        raise DatasetError(
            f"{self.name} split {split!r}: no data file found (looked for {tried}). "
            f"{self.how_to_get}"
        )


DATASETS: Registry[DatasetSpec] = Registry("dataset")


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Return the data root: ``data_dir`` if given, else ``$TABLEREASON_DATA_DIR``.

    Raises:
        DatasetError: When neither is set, or the folder does not exist.

    Example:
        >>> resolve_data_dir("/tmp").name
        'tmp'
    """
    if data_dir is None:
        env = os.environ.get(DATA_DIR_ENV)
        if not env:
            raise DatasetError(
                "no data folder given: pass data_dir=... (a folder holding wikitq/, tabfact/, "
                f"tabmwp/, scienceqa/, hotpotqa/) or set {DATA_DIR_ENV}. To fetch the official "
                "files, run tablereason.datasets.download(name, data_dir)."
            )
        data_dir = env
    root = Path(data_dir).expanduser()
    if not root.is_dir():
        raise DatasetError(
            f"data folder {str(root)!r} does not exist; pass an existing folder as data_dir or "
            f"set {DATA_DIR_ENV}, or create it with tablereason.datasets.download(name, data_dir)."
        )
    return root


def dataset_folder(spec: DatasetSpec, root: Path) -> Path:
    """The folder of ``spec``'s files: ``root/<name>``, or ``root`` itself when they are there.

    Raises:
        DatasetError: When neither holds any split file.
    """
    nested = root / spec.name
    if nested.is_dir():
        return nested
    if spec.local_splits(root):
        return root
    raise DatasetError(
        f"dataset {spec.name!r} not found: expected the folder {str(nested)!r} "
        f"(splits {', '.join(spec.splits)}). {spec.how_to_get}"
    )


def load_dataset(
    name: str,
    split: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    limit: int | None = None,
) -> list[Example]:
    """Load a benchmark split from local files.

    Args:
        name: Dataset name: ``wikitq``, ``tabfact``, ``tabmwp``, ``scienceqa`` or ``hotpotqa``.
        split: Split name; the dataset's default split when ``None``.
        data_dir: Folder holding one sub-folder per dataset (or the dataset folder itself);
            defaults to ``$TABLEREASON_DATA_DIR``.
        limit: Keep only the first ``limit`` examples, in file order.

    Returns:
        The examples, in file order.

    Raises:
        UnknownNameError: For an unknown dataset name.
        ConfigurationError: For an unknown split or a negative limit.
        DatasetError: When files are missing or malformed.

    Example:
        >>> exs = load_dataset("wikitq", "test", data_dir="data", limit=2)  # doctest: +SKIP
        >>> len(exs)  # doctest: +SKIP
        2
    """
    spec = DATASETS.get(name)
    split = split or spec.default_split
    if split not in spec.splits:
        raise ConfigurationError(
            f"dataset {name!r} has no split {split!r}; available splits: {', '.join(spec.splits)}"
        )
    if limit is not None and limit < 0:
        raise ConfigurationError(f"limit must be a non-negative integer, got {limit}")
    folder = dataset_folder(spec, resolve_data_dir(data_dir))
    examples = spec.reader(folder, split)
    return examples if limit is None else examples[:limit]


def available_datasets(data_dir: str | os.PathLike[str] | None = None) -> dict[str, list[str]]:
    """Which registered datasets and splits exist locally.

    Returns:
        Dataset name to the list of its splits found on disk (empty when absent).
    """
    root = resolve_data_dir(data_dir)
    found: dict[str, list[str]] = {}
    for name, spec in DATASETS.items():
        try:
            found[name] = spec.local_splits(dataset_folder(spec, root))
        except DatasetError:
            found[name] = []
    return found


def read_json(path: Path, *, expected: str, how_to_get: str = "") -> Any:
    """Read a JSON file, turning a missing or broken file into a :class:`DatasetError`.

    Args:
        path: The file.
        expected: What the file should hold, for the message.
        how_to_get: Where the file comes from, for the message.
    """
    if not path.is_file():
        raise DatasetError(f"missing file {str(path)!r}: expected {expected}. {how_to_get}")
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetFileError(
            f"{str(path)!r} is not valid JSON ({exc}); expected {expected}. "
            f"Replace it with a fresh copy. {how_to_get}"
        ) from exc


def iter_jsonl(path: Path, *, expected: str, how_to_get: str = "") -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON-lines file.

    Raises:
        DatasetError: When the file is missing.
        DatasetFileError: On a line that is not JSON, naming the line.
    """
    if not path.is_file():
        raise DatasetError(f"missing file {str(path)!r}: expected {expected}. {how_to_get}")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetFileError(
                    f"{str(path)!r} line {number} is not valid JSON ({exc}); expected {expected}. "
                    f"Replace the file with a fresh copy. {how_to_get}"
                ) from exc


def require_fields(record: Any, fields: tuple[str, ...], *, where: str, expected: str) -> None:
    """Check that ``record`` is a dict with every key in ``fields``.

    Raises:
        DatasetFileError: Naming the missing keys and where the record came from.
    """
    if not isinstance(record, dict):
        raise DatasetFileError(f"{where}: expected a JSON object ({expected}), got {record!r:.80}")
    missing = [f for f in fields if f not in record]
    if missing:
        raise DatasetFileError(
            f"{where}: missing field(s) {', '.join(missing)}; expected {expected}. "
            "The file may be truncated or in another format."
        )
