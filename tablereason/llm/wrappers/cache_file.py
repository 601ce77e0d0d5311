"""Checks that a response cache file can be used, made when the cache is opened.

See :mod:`tablereason.llm.wrappers.cache`: a folder, a file that is not SQLite, a truncated or
damaged database, or another program's database is refused with :class:`CacheFileError`
(a :class:`~tablereason.errors.ConfigurationError`: the ``--cache`` setting names a file
that cannot be used), whose message names the file and the ways out.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tablereason.errors import ConfigurationError

CHECK_MAX_BYTES = 1 << 30
"""Cache files up to this size are fully checked (``PRAGMA quick_check``) when opened."""
COLUMNS = ("key", "backend", "model", "request", "completion", "created")
_MAGIC = b"SQLite format 3\x00"


class CacheFileError(ConfigurationError):
    """The response cache file cannot be used: a folder, not SQLite, damaged or foreign."""


def way_out(path: Path) -> str:
    """What to do about an unusable cache file, for messages."""
    return (
        f"give another file (ask --cache PATH, or cache= in Python), run without a cache "
        f"(eval --no-cache), or delete {path} to start a new one (its recorded answers "
        "are lost)"
    )


def check_header(path: Path) -> None:
    """Refuse a path that is not an SQLite file (an empty or missing file is a new cache)."""
    if path.is_dir():
        raise CacheFileError(f"{path}: is a folder, not a response cache file; {way_out(path)}")
    if path.exists() and not path.is_file():
        raise CacheFileError(
            f"{path}: not a regular file (a device or a pipe?), so not a response cache; "
            f"{way_out(path)}"
        )
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as handle:
        header = handle.read(len(_MAGIC))
    if header != _MAGIC:
        raise CacheFileError(f"{path}: not a response cache (not an SQLite file); {way_out(path)}")


def check_database(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a damaged database, or one holding another program's tables."""
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    if tables and "responses" not in tables:
        raise CacheFileError(
            f"{path}: an SQLite database of another program (tables {', '.join(tables[:5])}), "
            f"not a response cache; it is left as it is: {way_out(path)}"
        )
    if "responses" in tables:
        columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(responses)"))
        if columns != COLUMNS:
            raise CacheFileError(
                f"{path}: its responses table has columns {columns}, not a response cache's "
                f"{COLUMNS}; {way_out(path)}"
            )
    if path.stat().st_size <= CHECK_MAX_BYTES:
        verdict = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
        if verdict != ["ok"]:
            raise CacheFileError(
                f"{path}: the cache file is damaged ({'; '.join(verdict)[:200]}); {way_out(path)}"
            )
