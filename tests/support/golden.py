"""Golden files: text the project renders (prompts, mostly), stored beside the tests.

Each test folder keeps its golden files in ``tests/<folder>/golden/``. A test renders
the text and hands it to :func:`check` (one file) or :func:`check_folder` (a set of
files that must be complete); a difference fails the test with the file's name.

After an intended change, rewrite the files and review the diff before committing::

    TABLEREASON_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/<folder>

The files are written and read as UTF-8 with ``\\n`` line ends, byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: Set to 1 to (re)write golden files from what the tests render.
UPDATE_ENV = "TABLEREASON_UPDATE_GOLDEN"
_HOW = f"rerun with {UPDATE_ENV}=1 to write it from what this run rendered, then review the diff"


def updating() -> bool:
    """Whether this run rewrites golden files (``TABLEREASON_UPDATE_GOLDEN=1``)."""
    return os.environ.get(UPDATE_ENV) == "1"


def check(path: Path, text: str) -> None:
    """Assert that ``text`` is what the golden file ``path`` holds.

    With ``TABLEREASON_UPDATE_GOLDEN=1`` the file is written first, so the check passes
    and the change shows up in ``git diff``.

    Args:
        path: The golden file.
        text: What the test rendered.
    """
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    assert path.is_file(), f"missing golden file {path}; {_HOW}"
    with path.open(encoding="utf-8", newline="") as handle:
        stored = handle.read()
    assert text == stored, f"golden file {path.name} differs from what was rendered; {_HOW}"


def check_folder(folder: Path, texts: Mapping[str, str], pattern: str = "*.txt") -> None:
    """Check a set of golden files, and that ``folder`` holds no others matching ``pattern``.

    Args:
        folder: The golden folder.
        texts: File name (inside ``folder``) to rendered text.
        pattern: The glob the set's files match; another matching file is stale.
    """
    for name, text in texts.items():
        check(folder / name, text)
    stale = sorted(p.name for p in folder.glob(pattern) if p.name not in texts)
    assert not stale, f"stale golden files in {folder} (nothing renders them): {stale}; delete them"
