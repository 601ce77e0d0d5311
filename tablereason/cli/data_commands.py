"""``tablereason datasets`` and ``download``: the benchmark data, in the command's words.

The data folder comes from ``--data-dir``, else ``$TABLEREASON_DATA_DIR``; every
message about it names those, and ``tablereason download``, rather than the Python
arguments of the library (:func:`cli_words` rewrites the library's own messages the
same way). ``download`` fetches the official files of the datasets that have a public
source (:data:`tablereason.datasets.download.SOURCES`) into ``<data dir>/<name>/``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tablereason.cli.exit_codes import EXIT_INPUT, EXIT_OK
from tablereason.errors import ConfigurationError, DatasetError

TIMEOUT_S = 60.0
"""Seconds a download may wait for the server between reads."""

_PYTHON_WORDS = (
    (re.compile(r"tablereason\.datasets\.download\('(\w+)', data_dir\)"),
     r"`tablereason download \1 --data-dir DIR`"),
    (re.compile(r"tablereason\.datasets\.download\(name, data_dir\)"),
     "`tablereason download NAME --data-dir DIR`"),
    (re.compile(r"pass data_dir=\.\.\."), "give --data-dir DIR"),
    (re.compile(r"pass an existing folder as data_dir"), "give an existing folder with --data-dir"),
    (re.compile(r"point data_dir at"), "point --data-dir at"),
)  # fmt: skip


def cli_words(message: str) -> str:
    """A dataset message with the library's Python arguments put as command-line options.

    Example:
        >>> cli_words("Get it with tablereason.datasets.download('tabmwp', data_dir).")
        'Get it with `tablereason download tabmwp --data-dir DIR`.'
    """
    for pattern, words in _PYTHON_WORDS:
        message = pattern.sub(words, message)
    return message


def data_root(data_dir: str | None, *, create: bool = False) -> Path:
    """The data folder: ``--data-dir``, else ``$TABLEREASON_DATA_DIR``.

    Args:
        data_dir: The ``--data-dir`` value.
        create: Make the folder when it is missing (``download``).

    Raises:
        DatasetError: When neither is set, or the folder does not exist (unless ``create``).

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> data_root(folder) == Path(folder)
        True
    """
    from tablereason.datasets import DATA_DIR_ENV

    value = data_dir or os.environ.get(DATA_DIR_ENV)
    if not value:
        raise DatasetError(
            "no data folder: give --data-dir DIR (a folder holding wikitq/, tabfact/, tabmwp/, "
            f"scienceqa/, hotpotqa/) or set {DATA_DIR_ENV}=DIR; `tablereason download NAME "
            "--data-dir DIR` fetches a dataset's public files there"
        )
    root = Path(value).expanduser()
    if create:
        root.mkdir(parents=True, exist_ok=True)
    if not root.is_dir():
        raise DatasetError(
            f"the data folder {str(root)!r} does not exist: give an existing folder with "
            f"--data-dir (or {DATA_DIR_ENV}), or fetch a dataset into it with `tablereason "
            f"download NAME --data-dir {root}`"
        )
    return root


def cmd_datasets(args: argparse.Namespace) -> int:
    """List the datasets and the splits found in the data folder."""
    from tablereason.datasets import DATASETS, available_datasets
    from tablereason.datasets.download import SOURCES

    try:
        local: dict[str, list[str]] | None = available_datasets(data_root(args.data_dir))
    except DatasetError as error:
        local, problem = None, error
    print(f"{'dataset':<10} {'local splits':<28} {'metric':<20} {'method':<15} description")
    for name, spec in DATASETS.items():
        found = "?" if local is None else ", ".join(local.get(name) or []) or "(not found)"
        print(
            f"{name:<10} {found:<28} {spec.default_metric:<20} {spec.default_method:<15} "
            f"{spec.description}"
        )
    missing = [n for n in DATASETS.names() if local is None or not local.get(n)]
    downloadable = [n for n in missing if n in SOURCES]
    if downloadable:
        print(f"\nfetch missing ones with: tablereason download {' '.join(downloadable)} "
              "--data-dir DIR")  # fmt: skip
    if local is None:
        print(f"tablereason: error: {cli_words(str(problem))}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK


def fetch(url: str, dest: Path) -> None:
    """Download ``url`` to ``dest``, saying what it fetches on stderr.

    Raises:
        DatasetError: When the server cannot be reached or answers with an error.
    """
    print(f"tablereason: fetching {url}", file=sys.stderr, flush=True)
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, dest.open("wb") as out:
            shutil.copyfileobj(response, out)
    except urllib.error.HTTPError as error:
        raise DatasetError(
            f"could not download {url}: the server answered HTTP {error.code} ({error.reason}); "
            "the file may have moved: fetch it yourself into "
            f"{dest.parent} (as {dest.name.removesuffix('.part')})"
        ) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise DatasetError(
            f"could not download {url}: {reason}; check the connection and try again"
        ) from None
    size = dest.stat().st_size
    print(f"tablereason: got {size / 2**20:,.1f} MiB", file=sys.stderr, flush=True)


def cmd_download(args: argparse.Namespace) -> int:
    """Fetch each named dataset's official files into the data folder."""
    from tablereason.datasets import DATASETS, available_datasets
    from tablereason.datasets.download import SOURCES, download

    for name in args.names:
        DATASETS.get(name)  # an unknown name is a usage error, with the closest one
        if name not in SOURCES:
            raise ConfigurationError(
                f"{name} has no public source to download from; put its files in DIR/{name} "
                f"(the datasets with one: {', '.join(SOURCES)})"
            )
    root = data_root(args.data_dir, create=True)
    for name in args.names:
        written = download(name, root, force=args.force, fetch=fetch)
        print(f"{name}: {len(written)} file(s) in {root / name}")
    found = available_datasets(root)
    for name in args.names:
        splits = ", ".join(found.get(name) or []) or "none (the files may have moved upstream)"
        print(f"{name} splits found: {splits}")
    first = args.names[0]
    print(f"next: tablereason eval --dataset {first} --data-dir {root} --limit 20 "
          f"--out runs/{first}")  # fmt: skip
    return EXIT_OK
