"""A one-line live progress report for evaluation runs (stderr, no dependencies).

:class:`ProgressLine` counts the examples of one run as they finish. For a run split
into shards that run as parallel tasks (threads, processes or Ray), the shards stream
their records to their own result files; :class:`ShardProgress` follows those files
from the parent (reading only the bytes appended since its last look) and draws one
line for the whole run. It works the same wherever the shards run, as long as their
files are on a folder the parent can read.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class ProgressLine:
    """Done count, accuracy so far, tokens, cost, rate and ETA, redrawn in place.

    Args:
        total: Examples this run will process (excluding ones resumed from the file).
        stream: Where to write; ``sys.stderr`` by default.
        min_interval_s: Redraw at most this often (the last update always draws).
        show_cost: Show the dollar cost so far.

    Example:
        >>> import io
        >>> p = ProgressLine(2, stream=io.StringIO(), min_interval_s=0)
        >>> p.update(score=1.0, tokens=10)
        >>> "1/2" in p.render()
        True
    """

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        min_interval_s: float = 0.2,
        show_cost: bool = False,
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.min_interval_s = min_interval_s
        self.done = 0
        self.failed = 0
        self.scored = 0
        self.score_sum = 0.0
        self.tokens = 0
        self.cost = 0.0
        self.show_cost = show_cost
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._finished = False
        self._lock = threading.Lock()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(
        self,
        *,
        score: float | None = None,
        tokens: int = 0,
        failed: bool = False,
        cost: float = 0.0,
    ) -> None:
        """Count one finished example and redraw when due."""
        with self._lock:
            self.done += 1
            self.cost += cost
            self.failed += failed
            self.tokens += tokens
            if score is not None:
                self.scored += 1
                self.score_sum += score
            now = time.monotonic()
            if self.done == self.total or now - self._last_draw >= self.min_interval_s:
                self._last_draw = now
                end = "\n" if self.done == self.total else ""
                self._finished = self.done == self.total
                if self._tty:
                    self.stream.write("\r" + self.render() + end)
                elif self.done == self.total or self.done % max(1, self.total // 20) == 0:
                    self.stream.write(self.render() + "\n")
                self.stream.flush()

    def finish(self) -> None:
        """Draw the final state on a line of its own, unless the last update did."""
        with self._lock:
            if self._finished:
                return
            self._finished = True
            self.stream.write(("\r" if self._tty else "") + self.render() + "\n")
            self.stream.flush()

    def render(self) -> str:
        """The progress text."""
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        accuracy = f"{100 * self.score_sum / self.scored:5.1f}%" if self.scored else "  n/a"
        cost = f" | ${self.cost:,.4f}" if self.show_cost else ""
        return (
            f"[{self.done}/{self.total}] acc {accuracy} | failed {self.failed} | "
            f"tokens {self.tokens:,}{cost} | {rate:.2f} ex/s | ETA {_duration(left)}"
        )


class ResultTail:
    """Reads the lines appended to a result file since the last :meth:`read`.

    Only complete lines are consumed; a line still being written is read next time.

    Args:
        path: The result file (it may not exist yet).

    Example:
        >>> tail = ResultTail("runs/wikitq/shards/results-0-of-4.jsonl")  # doctest: +SKIP
        >>> new_records = tail.read()  # doctest: +SKIP
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.offset = 0

    def read(self) -> list[dict[str, Any]]:
        """The records (the configuration line included) appended since the last call."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return []
        if size <= self.offset:
            self.offset = min(self.offset, size)  # cut back (a torn line dropped on resume)
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read(size - self.offset)
        end = data.rfind(b"\n") + 1
        self.offset += end
        records = []
        for line in data[:end].splitlines():
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue  # progress never stops a run; the runner reports damaged files
            if isinstance(record, dict):
                records.append(record)
        return records


class ShardProgress:
    """One live progress line for a run whose shards write their own result files.

    Use it as a context manager around the wait for the shard tasks: on entry it notes
    what the files already hold (resumed examples, not counted), then polls the files
    every ``interval_s`` on a background thread; on exit it reads what is left and
    draws the final line. The number of examples comes from the files' configuration
    line (``extra.total``, written by every shard) unless ``total`` is given.

    Args:
        paths: The shard result files.
        total: Examples in the whole run; read from the files when ``None``.
        stream: Where to write; ``sys.stderr`` by default.
        interval_s: Seconds between looks at the files.
        show_cost: Show the dollar cost so far.

    Example:
        >>> with ShardProgress(["s/results-0-of-2.jsonl", "s/results-1-of-2.jsonl"]):
        ...     pass  # wait for the shard tasks here  # doctest: +SKIP
    """

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        total: int | None = None,
        stream: TextIO | None = None,
        interval_s: float = 0.5,
        show_cost: bool = True,
    ) -> None:
        self.tails = [ResultTail(p) for p in paths]
        self.total = total
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self.show_cost = show_cost
        self.resumed = 0
        self.bar: ProgressLine | None = None
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Note what the files hold already and start polling."""
        self._started = time.monotonic()
        for tail in self.tails:
            for record in tail.read():
                self._note_total(record)
                if record.get("type") == "result":
                    self.resumed += 1
        self._thread = threading.Thread(target=self._loop, name="shard-progress", daemon=True)
        self._thread.start()

    def poll(self) -> int:
        """Read what the shards appended and update the line; returns new results."""
        new = 0
        with self._lock:
            for tail in self.tails:
                for record in tail.read():
                    self._note_total(record)
                    if record.get("type") != "result":
                        continue
                    new += 1
                    if self.bar is None:
                        self._start_bar()
                    if self.bar is not None:
                        self.bar.update(
                            score=record.get("score"),
                            tokens=int(record.get("prompt_tokens") or 0)
                            + int(record.get("completion_tokens") or 0),
                            failed=bool(record.get("error")),
                            cost=float(record.get("cost") or 0.0),
                        )
        return new

    def stop(self) -> None:
        """Stop polling, read what is left and draw the final line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.poll()
        if self.bar is not None:
            self.bar.finish()

    def _note_total(self, record: dict[str, Any]) -> None:
        if self.total is None and record.get("type") == "config":
            total = (record.get("extra") or {}).get("total")
            if isinstance(total, int):
                self.total = total

    def _start_bar(self) -> None:
        if self.total is None:
            return
        self.bar = ProgressLine(
            max(0, self.total - self.resumed), stream=self.stream, show_cost=self.show_cost
        )
        self.bar.started = self._started  # the rate counts from the start of the run

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.poll()

    def __enter__(self) -> ShardProgress:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
