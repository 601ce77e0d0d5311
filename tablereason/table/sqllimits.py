"""Limits for model-written SQL: :class:`SQLLimits`, and the ones ``Table.sql`` uses.

``run_sql`` takes its limits as an argument; ``Table.sql`` uses
:func:`table_sql_limits`, settable for the process with :func:`set_table_sql_limits`
or the ``TABLEREASON_SQL_MEMORY`` and ``TABLEREASON_SQL_THREADS`` environment
variables (its ``timeout_s`` replaces ``seconds``). See ``docs/security.md``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from tablereason.errors import ConfigurationError

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}  # fmt: skip


def memory_bytes(text: str | int) -> int:
    """Bytes in a memory size such as ``"256MB"``, ``"1GiB"`` or ``268435456``.

    Raises:
        ConfigurationError: The text is not a size.

    Example:
        >>> memory_bytes("1GiB"), memory_bytes("256MB")
        (1073741824, 256000000)
    """
    if isinstance(text, int) and not isinstance(text, bool):
        number, unit = float(text), ""
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
        if not match or match.group(2).lower() not in _UNITS:
            raise ConfigurationError(
                f"memory size {text!r} is not a size; write it like '256MB', '1GiB' or 268435456"
            )
        number, unit = float(match.group(1)), match.group(2).lower()
    size = int(number * _UNITS[unit])
    if size < 16 * 2**20:
        raise ConfigurationError(f"memory size {text!r} is below the minimum of 16 MiB")
    return size


@dataclass(frozen=True)
class SQLLimits:
    """What one query may use.

    ``memory`` is how much the worker's address space may grow while the query
    runs (DuckDB's own memory limit is half of it); ``threads`` are DuckDB's
    threads for the query; ``max_rows`` rows come back at most (beyond that the
    result is truncated, or refused by ``Table.sql``); ``max_result_bytes``
    bounds the size of what comes back; ``max_query_chars`` bounds the query text.

    Example:
        >>> SQLLimits().threads
        1
    """

    seconds: float = 5.0
    memory: str = "256MB"
    threads: int = 1
    max_rows: int = 10_000
    max_query_chars: int = 20_000
    max_result_bytes: int = 16 * 2**20

    def __post_init__(self) -> None:
        memory_bytes(self.memory)
        check_limits(self, ("threads", "max_rows", "max_query_chars", "max_result_bytes"))


def check_limits(limits: object, counts: tuple[str, ...]) -> None:
    """Refuse a ``seconds`` that is not positive, or a count that is not a positive integer.

    Raises:
        ConfigurationError: Naming the field and its value.

    Example:
        >>> check_limits(SQLLimits(), ("threads",))
    """
    seconds = getattr(limits, "seconds", 1.0)
    if not seconds > 0:
        raise ConfigurationError(f"seconds must be positive, got {seconds!r}")
    for name in counts:
        value = getattr(limits, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")


def _env_limits() -> SQLLimits:
    threads = os.environ.get("TABLEREASON_SQL_THREADS")
    try:
        return SQLLimits(
            seconds=10.0,
            memory=os.environ.get("TABLEREASON_SQL_MEMORY", "1GiB"),
            threads=int(threads) if threads else min(2, os.cpu_count() or 1),
            max_rows=1_000_000,
            max_query_chars=100_000,
            max_result_bytes=512 * 2**20,
        )
    except ValueError as error:
        raise ConfigurationError(f"TABLEREASON_SQL_THREADS: {error}") from None


_table_limits: SQLLimits | None = None


def table_sql_limits() -> SQLLimits:
    """The limits ``Table.sql`` runs with (its ``timeout_s`` replaces ``seconds``).

    Defaults: 1 GiB of memory, ``min(2, cores)`` threads, 1,000,000 rows, 512 MiB
    of result, 100,000 characters of query; ``TABLEREASON_SQL_MEMORY`` and
    ``TABLEREASON_SQL_THREADS`` change the first two.
    """
    global _table_limits
    if _table_limits is None:
        _table_limits = _env_limits()
    return _table_limits


def set_table_sql_limits(limits: SQLLimits | None) -> None:
    """Set the limits ``Table.sql`` runs with (``None`` restores the defaults)."""
    global _table_limits
    _table_limits = limits


def with_seconds(limits: SQLLimits, seconds: float) -> SQLLimits:
    """``limits`` with another time limit."""
    return replace(limits, seconds=seconds)
