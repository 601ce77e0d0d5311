"""The process-wide DuckDB database every table lives in: its settings and lockdown.

:func:`database` creates it on first use with a memory limit and a thread count
(:func:`configure_database`, :func:`database_settings`), attaches the compressed
in-memory catalog the tables are created in, then disables external access (files,
network, extension loading) and locks the configuration before any data enters it.
Connections to it are made by :class:`tablereason.table.storage.Store`.
"""

from __future__ import annotations

import os
import threading

import duckdb
from sqlglot import exp

from tablereason.errors import ConfigurationError

CATALOG = "tables"
"""The compressed in-memory catalog every physical table is created in."""
_ATTACH_CATALOG = "ATTACH ':memory:' AS tables (COMPRESS)"  # names CATALOG
USE_CATALOG = exp.Use(this=exp.to_identifier(CATALOG, quoted=True)).sql(dialect="duckdb")
"""The statement that makes :data:`CATALOG` a connection's default."""

_database: duckdb.DuckDBPyConnection | None = None
_database_lock = threading.Lock()


_settings: dict[str, str | int] = {}


def configure_database(memory_limit: str | None = None, threads: int | None = None) -> None:
    """Set the process-wide database's memory limit and threads (before its first use).

    Defaults: half of the machine's memory and :func:`default_threads` threads, or the
    ``TABLEREASON_DUCKDB_MEMORY`` and ``TABLEREASON_DUCKDB_THREADS`` environment
    variables. Model-written SQL never runs on this database (see
    :mod:`tablereason.table.sqlengine`); these bound the package's own queries.

    Raises:
        ConfigurationError: The database is already in use (its configuration is
            locked), or a value is invalid.
    """
    with _database_lock:
        if _database is not None:
            raise ConfigurationError(
                "the database is already in use and its configuration is locked; "
                "call configure_database() before the first table is built"
            )
        if memory_limit is not None:
            _settings["memory_limit"] = str(memory_limit)
        if threads is not None:
            if not isinstance(threads, int) or threads < 1:
                raise ConfigurationError(f"threads must be a positive integer, got {threads!r}")
            _settings["threads"] = threads


def default_threads(cores: int | None = None) -> int:
    """Half the machine's cores, at least 1 and at most 4.

    Each DuckDB thread keeps its own working memory (hash tables, buffers), which on a
    large table comes on top of the table itself, and half the cores leave the rest to
    a local model and to Python. On 2 cores a question on a 1,000,000-row CSV then
    peaks at about 1.33x the file instead of 1.51x with two threads, for about 0.6 s
    more per question (docs/benchmarks/large_tables.md).

    Example:
        >>> [default_threads(n) for n in (1, 2, 4, 16)]
        [1, 1, 2, 4]
    """
    return max(1, min(4, (cores if cores is not None else os.cpu_count() or 1) // 2))


def database_settings() -> dict[str, str | int]:
    """The memory limit and thread count the process-wide database uses (or will use)."""
    memory = os.environ.get("TABLEREASON_DUCKDB_MEMORY")
    if memory is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            memory = f"{max(total // 2 // 2**20, 256)}MiB"
        except (ValueError, OSError, AttributeError):  # no sysconf
            memory = "4GiB"
    threads = os.environ.get("TABLEREASON_DUCKDB_THREADS")
    return {
        "memory_limit": memory,
        "threads": int(threads) if threads and threads.isdigit() else default_threads(),
        **_settings,
    }


def database() -> duckdb.DuckDBPyConnection:
    """The process-wide, locked-down DuckDB database (created on first use)."""
    global _database
    with _database_lock:
        if _database is None:
            config: dict[str, str | bool | int | float | list[str]] = {
                "preserve_insertion_order": True,
                # Hand freed memory back to the system soon, and compress tables often
                # (see below): a large load's peak is then closer to what it keeps.
                "allocator_background_threads": True,
                "allocator_bulk_deallocation_flush_threshold": "1MB",
                "checkpoint_threshold": "4MB",
                # Two optimizer rules copy the plan at each layer of computed columns
                # (tablereason/table/relation.py), so over columns computed from one
                # another their cost doubles with each: late materialization (ORDER BY
                # ... LIMIT finds the rows, then joins the plan back for the other
                # columns; the first rows of a table of 20 such columns took more
                # memory than the machine has) and partial aggregate pushdown (an
                # aggregate over 12 such columns above a join ran past 30 s). Without
                # them, the first rows of a 1,000,000-row table take a few ms more, and
                # grouping and profile queries the same time (docs/benchmarks/large_tables.md).
                "disabled_optimizers": "late_materialization,partial_aggregate_pushdown",
                **database_settings(),
            }
            try:
                conn = duckdb.connect(":memory:", config=config)
            except duckdb.Error as error:
                raise ConfigurationError(
                    f"invalid database settings {database_settings()}: {error}; "
                    "check TABLEREASON_DUCKDB_MEMORY and TABLEREASON_DUCKDB_THREADS"
                ) from None
            # Tables live in a compressed in-memory catalog: DuckDB compresses their
            # columns when it checkpoints, which it does by itself once 4 MB of changes
            # are committed (a 1,000,000-row table of short text cells: 36 MiB stored
            # uncompressed, 14 MiB compressed).
            conn.execute(_ATTACH_CATALOG)
            conn.execute(USE_CATALOG)
            conn.execute("SET enable_external_access = false")
            conn.execute("SET lock_configuration = true")
            _database = conn
        return _database
