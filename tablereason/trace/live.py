"""The live view of a running question: each step printed as it completes.

:class:`LiveSteps` is what ``tablereason ask`` shows while a method works: the question
first, then every step of the trace as soon as it is complete (rendered as
:func:`~tablereason.trace.console.print_trace` renders it), then the outcome. On a
terminal, with rich installed, a spinner under the last step says what is running and
for how long; piped to a file or another program it prints plain lines only, each step
with its own time. Give its :meth:`~LiveSteps.started` and :meth:`~LiveSteps.finished`
to :func:`~tablereason.trace.listen.following`.

Example:
    >>> import io
    >>> from tablereason.trace import Trace, TraceStep
    >>> from tablereason.trace.listen import following
    >>> out = io.StringIO()
    >>> with LiveSteps("q?", out, plain=True) as live:
    ...     with following(live.finished, on_start=live.started):
    ...         trace = Trace(question="q?")
    ...         _ = trace.add(TraceStep(kind="plan", name="plan")).start().stop()
    ...         first = out.getvalue()
    ...     live.outcome("yes", None)
    >>> "[1] plan plan" in first
    True
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, TextIO

from tablereason.trace.console import TraceView
from tablereason.trace.html import TableDict
from tablereason.trace.record import TraceStep
from tablereason.trace.table_fit import HIDDEN_HINT
from tablereason.trace.terminal import visible


class _Working:
    """The spinner's text: the running step, or the time since the last one, live."""

    def __init__(self) -> None:
        self.label = "starting"
        self.since = time.monotonic()
        self._lock = threading.Lock()

    def set(self, label: str) -> None:
        with self._lock:
            self.label = label
            self.since = time.monotonic()

    def __rich__(self) -> Any:
        from rich.text import Text

        with self._lock:
            label, since = self.label, self.since
        return Text(f"{label} · {time.monotonic() - since:.1f} s", style="dim")


class LiveSteps:
    """Prints a question, then its steps as they complete, then the outcome.

    Args:
        question: The question, printed first.
        file: Output stream; standard output by default.
        max_rows: Rows shown per table.
        plain: Force plain text (``True``) or rich (``False``); by default rich when
            installed. The spinner needs rich and a terminal.
        hidden_hint: What to do to see the columns a wide table hides.
    """

    def __init__(
        self,
        question: str,
        file: TextIO | None = None,
        *,
        max_rows: int = 20,
        plain: bool | None = None,
        hidden_hint: str = HIDDEN_HINT,
    ) -> None:
        self.view = TraceView(file, max_rows=max_rows, plain=plain, hidden_hint=hidden_hint)
        self.question = question
        self.count = 0
        self.before: TableDict | None = None
        self._working = _Working()
        self._status: Any = None
        self._lock = threading.Lock()
        tty = bool(getattr(self.view.out, "isatty", lambda: False)())
        self.spinner = self.view.rich and tty

    def __enter__(self) -> LiveSteps:
        self.view.question(self.question)
        if self.spinner:
            self._working.set("1. working")
            self._status = self.view.console.status(self._working, spinner="dots")
            self._status.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop_spinner()

    def _stop_spinner(self) -> None:
        with self._lock:
            status, self._status = self._status, None
        if status is not None:
            status.stop()

    def started(self, step: TraceStep) -> None:
        """A timed step started: the spinner names it."""
        label = f"{self.count + 1}. {visible(step.kind)} · {visible(step.name)}"
        self._working.set(label)

    def finished(self, step: TraceStep) -> None:
        """A step is complete: print it (and its table when it changed)."""
        with self._lock:
            self.count += 1
            data = step.to_dict()
            self.view.step(self.count, data, self.before)
            if data.get("table") is not None:
                self.before = data["table"]
        self._working.set(f"{self.count + 1}. working")

    def outcome(
        self,
        answer: Any,
        error: str | None,
        evidence: Mapping[str, Any] | None = None,
        warnings: list[Mapping[str, Any]] | None = None,
    ) -> None:
        """The failure, when there is one, the answer, its evidence and warnings.

        The spinner stops first.
        """
        self._stop_spinner()
        self.view.outcome(answer, error, evidence, warnings)
