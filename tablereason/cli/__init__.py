"""The ``tablereason`` command: ``main`` runs it; ``parser`` declares its arguments.

Example:
    >>> from tablereason.cli import EXIT_OK
    >>> EXIT_OK
    0
"""

from tablereason.cli.exit_codes import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_MODEL,
    EXIT_NO_ANSWER,
    EXIT_OK,
    EXIT_USAGE,
)
from tablereason.cli.main import exit_code, main

__all__ = [
    "EXIT_INPUT",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_MODEL",
    "EXIT_NO_ANSWER",
    "EXIT_OK",
    "EXIT_USAGE",
    "exit_code",
    "main",
]
