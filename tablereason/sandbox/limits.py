"""Resource limits and the result of one sandboxed run.

Both are plain frozen dataclasses so they cross the process boundary as JSON
(``dataclasses.asdict``) without pickle.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from tablereason.errors import ConfigurationError, ExecutionError

Mode = Literal["default", "paper"]

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one sandboxed program may use.

    Attributes:
        wall_seconds: Wall-clock time before the whole process group is killed.
        cpu_seconds: CPU time (``RLIMIT_CPU``, whole seconds, rounded up).
        memory_bytes: Address space the program may add on top of the preloaded
            interpreter (``RLIMIT_AS``).
        file_bytes: Largest file the program may write (``RLIMIT_FSIZE``).
        open_files: Most file descriptors open at once (``RLIMIT_NOFILE``).
        scratch_bytes: Size of the private tmpfs used as working directory.
        output_bytes: Most bytes of printed output kept; printing more fails.
        value_bytes: Largest answer value, measured as JSON.
        max_code_chars: Longest program accepted.

    Example:
        >>> Limits(wall_seconds=1.0).cpu_seconds
        5.0
    """

    wall_seconds: float = 5.0
    cpu_seconds: float = 5.0
    memory_bytes: int = 512 * MIB
    file_bytes: int = 16 * MIB
    open_files: int = 64
    scratch_bytes: int = 16 * MIB
    output_bytes: int = 64 * 1024
    value_bytes: int = 64 * 1024
    max_code_chars: int = 100_000

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigurationError(
                    f"Limits.{f.name} must be a positive number, got {value!r}"
                )

    def to_json(self) -> dict[str, Any]:
        """The limits as a JSON-able dict."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ExecResult:
    """What came back from one sandboxed run.

    Attributes:
        value: The answer variable as data (None, bool, int, float, str, list,
            dict), or None when the program failed or did not set it.
        stdout: Printed output (capped by ``Limits.output_bytes``).
        error: A message for the model when the program failed, else None.
        duration: Wall-clock seconds, as seen by the caller.
        value_type: Python type name of the answer before conversion
            (``"Fraction"``, ``"int64"``), or None when it was not set.
        has_value: Whether the program assigned the answer variable at all.
        layers: Containment layers that were active for this run.

    Example:
        >>> ExecResult(value=3, stdout="", error=None, duration=0.01).ok
        True
    """

    value: Any
    stdout: str
    error: str | None
    duration: float
    value_type: str | None = None
    has_value: bool = False
    layers: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when the program ran to the end without an error."""
        return self.error is None

    def raise_for_error(self) -> ExecResult:
        """Raise :class:`ExecutionError` when the program failed, else return self.

        Example:
            >>> ExecResult(value=1, stdout="", error=None, duration=0.0).raise_for_error().value
            1
        """
        if self.error is not None:
            raise ExecutionError(self.error)
        return self
