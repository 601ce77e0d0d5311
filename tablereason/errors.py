"""Error hierarchy.

Every error the library raises derives from :class:`TableReasonError`, and most
also derive from the matching built-in exception, so callers can catch either::

    try:
        table.select_columns(["Nmae"])
    except KeyError:  # or TableReasonError, or UnknownColumnError
        ...

Messages say what went wrong and what to do next.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TableReasonError(Exception):
    """Root of every error raised by tablereason."""


class ConfigurationError(TableReasonError, ValueError):
    """A setting, option or argument combination is invalid."""


class MissingDependencyError(TableReasonError, ImportError):
    """An optional dependency is not installed; the message gives the install command."""


class TableError(TableReasonError, ValueError):
    """A table could not be built or an operation could not be applied."""


class TableParseError(TableError):
    """Text (CSV, pipe form) could not be read as a table."""


class UnknownColumnError(TableError, KeyError):
    """A column name does not exist in the table."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0]) if self.args else ""


class RowIndexError(TableError, IndexError):
    """A row position is outside the table."""


class UnknownNameError(TableReasonError, KeyError):
    """A name is not registered (operation, method, tool, dataset, metric...)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SQLError(TableReasonError, ValueError):
    """A SQL query was rejected by the guard or failed to run."""


class ExecutionError(TableReasonError, RuntimeError):
    """User or model code ran and failed; the message is meant to be fed back to the model."""


class SandboxError(TableReasonError, RuntimeError):
    """The sandbox itself broke (could not start, lost its worker): abort rather than retry."""


class LLMError(TableReasonError, RuntimeError):
    """A language-model backend failed after retries."""


class ParseError(TableReasonError, ValueError):
    """Model output could not be parsed; keeps the raw text and what was expected."""

    def __init__(self, message: str, *, raw: str = "", expected: str = "") -> None:
        super().__init__(message)
        self.raw = raw
        self.expected = expected


class DatasetError(TableReasonError, FileNotFoundError):
    """A dataset file is missing or malformed; the message says which file and how to get it."""


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """Return the candidate most similar to ``name``, or ``None`` when nothing is close.

    Args:
        name: The name that was not found.
        candidates: Valid names.

    Returns:
        The closest valid name, compared case-insensitively.

    Example:
        >>> closest("Nmae", ["Name", "Year"])
        'Name'
    """
    pool = list(candidates)
    lowered = {c.lower(): c for c in pool}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[match[0]] if match else None


def did_you_mean(name: str, candidates: Iterable[str], *, kind: str = "name") -> str:
    """Build an "unknown X; did you mean Y? available: ..." message.

    Args:
        name: The name that was not found.
        candidates: Valid names.
        kind: What the name refers to, for the message ("column", "operation"...).

    Returns:
        A one-line message.

    Example:
        >>> did_you_mean("sortby", ["sort_by", "group_by"], kind="operation")
        "unknown operation 'sortby'; did you mean 'sort_by'? available: 'sort_by', 'group_by'"
    """
    pool = list(candidates)
    best = closest(name, pool)
    hint = f"; did you mean {best!r}?" if best is not None else ""
    available = ", ".join(repr(c) for c in pool) if pool else "(none)"
    return f"unknown {kind} {name!r}{hint} available: {available}"
