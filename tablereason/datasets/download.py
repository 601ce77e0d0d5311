"""Explicit download of the official benchmark files.

Nothing in the library calls this implicitly: loaders only read local folders.
Call :func:`download` yourself when online; it writes the files where
:func:`~tablereason.datasets.load_dataset` looks for them (``<data_dir>/<name>/``).
ScienceQA images are not fetched (they are distributed as a large archive); the
captions and OCR that Chameleon uses instead are.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tablereason.datasets.loader import DATASETS, DatasetError


@dataclass(frozen=True)
class Source:
    """One file to fetch.

    Attributes:
        url: Where it is published.
        target: Path relative to the dataset folder (a file, or for zips the folder to fill).
        unzip_member: For zip archives, the folder inside the archive whose contents are kept.
    """

    url: str
    target: str
    unzip_member: str | None = None


_GH = "https://raw.githubusercontent.com"
SOURCES: dict[str, tuple[Source, ...]] = {
    "wikitq": (
        Source(
            "https://github.com/ppasupat/WikiTableQuestions/releases/download/v1.0.2/"
            "WikiTableQuestions-1.0.2-compact.zip",
            ".",
            unzip_member="WikiTableQuestions/",
        ),
    ),
    "tabfact": (
        Source(
            "https://github.com/google-research/chain-of-table/raw/main/data.zip",
            ".",
            unzip_member="data/tabfact/",
        ),
    ),
    "tabmwp": (
        Source(
            f"{_GH}/lupantech/chameleon-llm/main/data/tabmwp/problems_test1k.json",
            "problems_test1k.json",
        ),
        Source(
            f"{_GH}/lupantech/chameleon-llm/main/data/tabmwp/problems_dev1k.json",
            "problems_dev1k.json",
        ),
    ),
    "scienceqa": (
        Source(f"{_GH}/lupantech/ScienceQA/main/data/scienceqa/problems.json", "problems.json"),
        Source(f"{_GH}/lupantech/ScienceQA/main/data/scienceqa/pid_splits.json", "pid_splits.json"),
        Source(f"{_GH}/lupantech/chameleon-llm/main/data/scienceqa/captions.json", "captions.json"),
        Source(f"{_GH}/lupantech/chameleon-llm/main/data/scienceqa/ocrs.json", "ocrs.json"),
    ),
    "hotpotqa": (
        Source(
            "http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
            "hotpot_dev_distractor_v1.json",
        ),
    ),
}

Fetch = Callable[[str, Path], None]


def _urlopen_fetch(url: str, dest: Path) -> None:
    with urllib.request.urlopen(url, timeout=60) as response, dest.open("wb") as out:
        shutil.copyfileobj(response, out)


def _unzip(archive: Path, member: str, folder: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        names = [n for n in zf.namelist() if n.startswith(member) and not n.endswith("/")]
        if not names:
            raise DatasetError(
                f"archive {archive.name} has no folder {member!r}; the release may have moved"
            )
        for name in names:
            relative = Path(name[len(member) :])
            if relative.is_absolute() or ".." in relative.parts:
                continue
            dest = folder / relative
            dest.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(name) as src, dest.open("wb") as out:
                shutil.copyfileobj(src, out)


def download(
    name: str,
    data_dir: str | os.PathLike[str],
    *,
    force: bool = False,
    fetch: Fetch | None = None,
    dry_run: bool = False,
) -> list[Path]:
    """Fetch a dataset's official files into ``<data_dir>/<name>/``.

    Args:
        name: Dataset name (see :data:`SOURCES`).
        data_dir: Data root; created when missing.
        force: Fetch again even when the target already exists.
        fetch: ``fetch(url, dest_path)``; defaults to a plain HTTPS download.
        dry_run: Only return the targets that would be written.

    Returns:
        The files or folders written (or that would be written).

    Example:
        >>> [p.name for p in download("tabmwp", "/tmp/data", dry_run=True)]
        ['problems_test1k.json', 'problems_dev1k.json']
    """
    DATASETS.get(name)  # unknown names fail with the list of datasets
    folder = Path(data_dir).expanduser() / name
    targets = [folder / s.target for s in SOURCES[name]]
    if dry_run:
        return targets
    fetch = fetch or _urlopen_fetch
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source, target in zip(SOURCES[name], targets, strict=True):
        if source.unzip_member is None:
            if target.exists() and not force:
                written.append(target)
                continue
            partial = target.with_name(target.name + ".part")
            fetch(source.url, partial)
            partial.replace(target)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                archive = Path(tmp) / "archive.zip"
                fetch(source.url, archive)
                _unzip(archive, source.unzip_member, folder)
        written.append(target)
    return written
