"""The exit codes of the ``tablereason`` command (stable, for scripts; docs/cli.md lists them).

Example:
    >>> EXIT_MODEL, EXIT_NO_ANSWER
    (4, 5)
"""

EXIT_OK = 0
"""Success."""
EXIT_INTERNAL = 1
"""An unexpected internal error: a bug."""
EXIT_USAGE = 2
"""Bad usage: an unknown option, method, dataset or example; invalid settings."""
EXIT_INPUT = 3
"""Bad input: a table, dataset or result file is missing or unreadable."""
EXIT_MODEL = 4
"""The model failed: unreachable, failed after retries, or a dependency is missing."""
EXIT_NO_ANSWER = 5
"""``ask`` ran but produced no answer."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C)."""
