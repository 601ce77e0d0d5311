"""Traces: everything a method did, step by step, with every intermediate table.

A :class:`Trace` is data. It serialises to JSON (tables as header, rows and
caption), so a saved trace can be inspected or replayed without a model, and it
renders as a self-contained HTML page (:meth:`Trace.to_html`, also shown by
notebooks) or in the terminal (:meth:`Trace.print`).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from tablereason.answers.records import AnswerWarning, Evidence
from tablereason.answers.value import AnswerValue
from tablereason.llm.base import Usage
from tablereason.llm.redaction import redact
from tablereason.trace.console import print_trace
from tablereason.trace.html import render_body, render_page
from tablereason.trace.listen import StepFeed, current_feed

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


WINDOW_ABOVE_ROWS = 1000
"""Tables with more rows than this are saved in a trace's JSON as a window."""
WINDOW_ROWS = 100
"""Rows of such a table kept in the JSON form (its first rows)."""


class TraceStep(BaseModel):
    """One step of a method run.

    Attributes:
        kind: What happened: ``"plan"``, ``"operation"``, ``"answer"``, ``"module"``,
            ``"tool"``, ``"program"``...
        name: The operation, module or tool name (``"select_rows"``).
        prompt_name: The prompt template used, when a model was asked.
        raw: Raw model completion(s), kept even when parsing failed.
        arguments: Parsed, typed arguments of the decision (JSON-able).
        table: The table after the step, when the step produced one.
        usage: Tokens and requests spent by this step.
        duration_s: Wall time of the step: set by :meth:`stop` for a step timed with
            :meth:`start` (0 while it runs), or given directly.
        error: What went wrong, when the step failed or was rejected.
        note: Free-form detail (fallback taken, rule that rejected, ...).
        prompts: The exact text of every request the step sent, in order (a chat
            request as its messages, each under a ``[role]`` line; see
            :func:`~tablereason.calls.prompt_text`).
        constraint: What the replies were constrained to, when a constraint was sent.
        reasks: Requests made again because a reply could not be read.
        unparsed: Replies whose text could not be parsed.
        violations: Replies that broke the constraint they were sent with (a server
            that accepted it and ignored it).

    A step of a followed trace (:func:`~tablereason.trace.listen.following`) tells the
    feed when it starts and stops.

    Example:
        >>> step = TraceStep(kind="plan", name="plan").start()
        >>> step.running, step.duration_s
        (True, 0.0)
        >>> 0.0 <= step.stop().duration_s < 1.0 and not step.running
        True
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: str
    name: str
    prompt_name: str | None = None
    raw: list[str] = Field(default_factory=list)
    arguments: dict[str, Any] = Field(default_factory=dict)
    table: Any = None
    usage: Usage = Field(default_factory=lambda: Usage(requests=0))
    duration_s: float = 0.0
    error: str | None = None
    note: str | None = None
    prompts: list[str] = Field(default_factory=list)
    constraint: str | None = None
    reasks: int = 0
    unparsed: int = 0
    violations: int = 0
    _started: float | None = PrivateAttr(default=None)
    _timed: bool = PrivateAttr(default=False)
    _feed: StepFeed | None = PrivateAttr(default=None)

    def start(self) -> TraceStep:
        """Start timing the step; :meth:`stop` (or the run's end) sets ``duration_s``."""
        self._started = time.perf_counter()
        self._timed = True
        self.duration_s = 0.0
        if self._feed is not None:
            self._feed.started(self)
        return self

    def stop(self) -> TraceStep:
        """Set ``duration_s`` to the time since :meth:`start`; no effect on a stopped step."""
        if self._started is not None:
            self.duration_s = max(0.0, time.perf_counter() - self._started)
            self._started = None
            if self._feed is not None:
                self._feed.settle()
        return self

    @property
    def running(self) -> bool:
        """Whether the step was started and not yet stopped."""
        return self._started is not None

    @property
    def timed(self) -> bool:
        """Whether the step was timed with :meth:`start` (it is complete once stopped)."""
        return self._timed

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; the table becomes ``{"caption", "header", "rows"}``.

        The header holds the table's display names (unique and non-empty, as
        ``Table.columns`` gives them), so every column can be told apart. A table of
        more than :data:`WINDOW_ABOVE_ROWS` rows keeps only its first
        :data:`WINDOW_ROWS` rows, with ``"num_rows"`` giving its size (the live
        ``Table`` in :attr:`table` still holds every row). ``error`` and ``note`` are
        redacted (:func:`~tablereason.llm.redaction.redact`): a key an error message
        quoted never reaches a saved trace or page.
        """
        data = self.model_dump(exclude={"table"})
        for field in ("error", "note"):
            if data.get(field):
                data[field] = redact(data[field])
        table: Table | None = self.table
        if table is not None and table.num_rows > WINDOW_ABOVE_ROWS:
            data["table"] = {
                "caption": table.caption,
                "header": list(table.columns),
                "rows": table.rows(WINDOW_ROWS),
                "num_rows": table.num_rows,
            }
        elif table is not None:
            _, *rows = table.to_records()
            data["table"] = {"caption": table.caption, "header": list(table.columns), "rows": rows}
        else:
            data["table"] = None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TraceStep:
        """Rebuild a step from :meth:`to_dict` output (the table is rebuilt from its rows)."""
        # Loaded here, not at the top: the table engine brings DuckDB, which reading or
        # showing a trace does not need (the engine does not import the trace).
        from tablereason.table.value import Table

        fields = {k: v for k, v in data.items() if k in cls.model_fields and k != "table"}
        table = data.get("table")
        if isinstance(table, dict) and table.get("header"):
            fields["table"] = Table.from_records(
                table["header"], table.get("rows") or [], caption=table.get("caption")
            )
        return cls.model_validate(fields)


class Trace(BaseModel):
    """The steps of one method run, in order; and of the runs it is composed of.

    A composed method (self-consistency, Mix-SC, a critic) keeps each inner run as a
    sub-trace in :attr:`runs`, with that run's ``answer`` and ``error``; its own steps
    (the vote, the judge's verdicts) stay in :attr:`steps`. :attr:`usage` sums both, so
    a composed run's requests and tokens are exactly its samples' and its own.

    The first trace created inside a :func:`~tablereason.trace.listen.following` block
    reports its steps to that block's feed as they complete.

    Example:
        >>> sample = Trace(method="chain_of_table #1", answer=["3"],
        ...                steps=[TraceStep(kind="plan", name="<END>", usage=Usage(requests=1))])
        >>> outer = Trace(method="self_consistency", runs=[sample, sample])
        >>> outer.usage.requests, Trace.from_dict(outer.to_dict()).runs[1].answer
        (2, ['3'])
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    method: str = ""
    question: str = ""
    steps: list[TraceStep] = Field(default_factory=list)
    runs: list[Trace] = Field(default_factory=list)
    answer: str | list[str] | None = None
    error: str | None = None
    _feed: StepFeed | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Bind the trace to the feed of the ``following`` block it is created in, if free."""
        feed = current_feed()
        if feed is not None and feed.claim(self):
            self._feed = feed
            for step in self.steps:
                step._feed = feed

    def add(self, step: TraceStep) -> TraceStep:
        """Append a step and return it.

        An ``"error"`` step ends the steps still running (:meth:`stop_running`): they
        failed, and their duration is the time until the failure. A followed trace
        reports the steps this one completes (those before it that are not running).
        """
        if step.kind == "error":
            self.stop_running()
        self.steps.append(step)
        if self._feed is not None:
            step._feed = self._feed
            self._feed.settle()
        return step

    def stop_running(self) -> None:
        """Stop the timing of every step still running (see :meth:`TraceStep.start`)."""
        for step in self.steps:
            step.stop()
        for run in self.runs:
            run.stop_running()

    @property
    def usage(self) -> Usage:
        """Summed usage of every step, and of every sub-run's."""
        total = Usage(requests=0)
        for step in self.steps:
            total = total + step.usage
        for run in self.runs:
            total = total + run.usage
        return total

    @property
    def tables(self) -> list[Table]:
        """Every intermediate table, in order (a composed run's own: its sub-runs keep theirs)."""
        return [s.table for s in self.steps if s.table is not None]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form of the whole trace.

        A table made from the trace's first table by operations also keeps those
        operations' steps (``"lineage"``), so that :meth:`from_dict` can replay them and
        rebuild the table with the lineage of its cells.
        """
        steps = [s.to_dict() for s in self.steps]
        tables = [s.table for s in self.steps if s.table is not None]
        for step, data in zip(self.steps, steps, strict=True):
            if step.table is not None and tables and step.table is not tables[0]:
                lineage = _steps_from(step.table, tables[0])
                if lineage:
                    data["table"]["lineage"] = lineage
        saved: dict[str, Any] = {
            "method": self.method,
            "question": self.question,
            "steps": steps,
            "usage": self.usage.model_dump(),
        }
        if self.runs:
            saved["runs"] = [run.to_dict() for run in self.runs]
        if self.answer is not None:
            saved["answer"] = self.answer
        if self.error is not None:
            saved["error"] = redact(self.error)
        return saved

    def to_json(self, **kwargs: Any) -> str:
        """The trace as a JSON string."""
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """Rebuild a trace from :meth:`to_dict` output (for example a result file's record).

        Example:
            >>> t = Trace(question="q", steps=[TraceStep(kind="plan", name="<END>")])
            >>> Trace.from_dict(t.to_dict()).steps[0].name
            '<END>'
        """
        steps = [TraceStep.from_dict(s) for s in data.get("steps") or []]
        saved = [s.get("table") for s in data.get("steps") or []]
        at = next((i for i, s in enumerate(steps) if s.table is not None), None)
        first = None if at is None or saved[at].get("num_rows") else steps[at].table
        for step, table in zip(steps, saved, strict=True):
            if first is not None and isinstance(table, dict) and table.get("lineage"):
                step.table = _replayed(first, table, step.table)
        runs = [cls.from_dict(run) for run in data.get("runs") or [] if isinstance(run, dict)]
        return cls(
            method=data.get("method", ""), question=data.get("question", ""), steps=steps,
            runs=runs, answer=data.get("answer"), error=data.get("error"),
        )  # fmt: skip

    def to_html(self, path: str | os.PathLike[str] | None = None, **header: Any) -> str:
        """A self-contained HTML page of the trace; also written to ``path`` when given.

        Args:
            path: Where to write the page.
            **header: ``answer``, ``error``, ``extra``, ``title``, ``evidence`` and
                ``warnings`` for the page header (see :func:`~tablereason.trace.html.render_page`).

        Example:
            >>> "<!doctype html>" in Trace(question="q").to_html()
            True
        """
        page = render_page(self.to_dict(), **header)
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page

    def _repr_html_(self) -> str:
        return render_body(self.to_dict())

    def print(self, file: TextIO | None = None, *, max_rows: int = 20, **header: Any) -> None:
        """Print every step and intermediate table to the terminal (rich when installed).

        Args:
            file: Where to print (standard output by default).
            max_rows: Rows shown per table.
            **header: ``answer``, ``error``, ``evidence`` and ``warnings`` to print (see
                :func:`~tablereason.trace.console.print_trace`).
        """
        print_trace(self.to_dict(), file=file, max_rows=max_rows, **header)


def _steps_from(table: Table, first: Table) -> list[dict[str, Any]]:
    """The steps that made ``table`` from ``first`` (none when it does not descend from it)."""
    chain = table.lineage()
    for at, node in enumerate(chain):
        if node is first:
            return [n.step.to_dict() for n in chain[at + 1 :] if n.step is not None]
    return []


def _replayed(first: Table, saved: dict[str, Any], rows: Table | None) -> Table | None:
    """``saved`` rebuilt by replaying its lineage on ``first``; its rows when that fails.

    A replay is kept only when it gives the table that was saved, every row of it (the
    caller replays only on a first table saved whole, not as a window).
    """
    if rows is None or saved.get("num_rows"):
        return rows
    from tablereason.errors import TableReasonError

    try:
        table = first.replay(saved["lineage"])
    except (TableReasonError, ValueError, KeyError):
        return rows
    return table if table.columns == rows.columns and table.rows() == rows.rows() else rows


class Prediction(BaseModel):
    """A method's answer with the trace that produced it, checked.

    ``answer`` is the answer as the method gave it: a string, or a list of strings for
    list answers (WikiTQ). Scorers read it (never ``value``), so checking an answer
    changes no score. ``error`` is set when the run failed; the answer is then empty
    and counts as wrong. ``raw_answer`` is the answer before it was turned into text,
    for methods that keep one: Chameleon's answer generator value (a float, bool,
    string or None), which the published TabMWP scoring reads. Left unset, it is
    absent (see :attr:`has_raw_answer`) and scorers fall back to ``answer``.

    Every prediction is checked when it is made (:func:`tablereason.answers.assess`),
    from its answer, error and trace alone, whatever the method:

    * ``value``: the answer typed (number, date, boolean, text, or a list of them) and
      normalised (trailing punctuation; a whole row or a sentence reduced to the one
      cell of the final table it names);
    * ``evidence``: the input-table cells the answer rests on, followed through the
      lineage of the trace's tables (``status`` says when there are none, and why);
    * ``warnings``: signs that the answer is suspect, each with a code and a sentence.

    Given explicitly (a prediction read back from a result file), they are kept.

    Example:
        >>> Prediction(answer="12", raw_answer=12.0).has_raw_answer
        True
        >>> p = Prediction(answer=["13."])
        >>> p.value.value, p.evidence.status, p.warnings
        (13, 'not_available', [])
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    answer: str | list[str] = ""
    trace: Trace = Field(default_factory=Trace)
    error: str | None = None
    raw_answer: Any = None
    value: AnswerValue | None = None
    evidence: Evidence | None = None
    warnings: list[AnswerWarning] | None = None

    def model_post_init(self, context: Any, /) -> None:
        """The run is over: steps still running (a failure skipped their end) stop now.

        ``error`` is redacted (:func:`~tablereason.llm.redaction.redact`), as the
        trace's messages are; the answer is checked unless its checks were given.
        """
        self.trace.stop_running()
        if self.error:
            self.error = redact(self.error)
        if self.value is None or self.evidence is None or self.warnings is None:
            self._check(None)

    def _check(self, source: Table | None) -> None:
        """Check the answer; a check that fails leaves the prediction as it is, saying why."""
        from tablereason.answers.assess import assess  # the engine loads only to check

        try:
            checked = assess(self, source)
        except Exception as error:  # a prediction is never lost to its check
            reason = f"not available: the answer could not be checked ({type(error).__name__})"
            self.value = AnswerValue(type="none", notes=[reason])
            self.evidence, self.warnings = Evidence(status="not_available", how=reason), []
            return
        self.value, self.evidence, self.warnings = (
            checked.value,
            checked.evidence,
            checked.warnings,
        )

    def checked(self, source: Table | None = None) -> Prediction:
        """A copy checked again: after its answer or error changed, or against ``source``.

        ``source`` is the table the user passed, for a run that read a copy of it (the
        paper profile lower-cases WikiTQ tables): the evidence then cites its cells.
        """
        copy = self.model_copy()
        copy._check(source)
        return copy

    @property
    def has_raw_answer(self) -> bool:
        """Whether the method set ``raw_answer`` (even to None: "no answer")."""
        return "raw_answer" in self.model_fields_set

    @property
    def tables(self) -> list[Table]:
        """Every intermediate table of the run."""
        return self.trace.tables

    def checks(self) -> dict[str, Any]:
        """``value``, ``evidence`` and ``warnings`` as JSON-able data.

        Example:
            >>> sorted(Prediction(answer="no").checks())
            ['evidence', 'value', 'warnings']
        """
        return {
            "value": self.value.model_dump(mode="json") if self.value else None,
            "evidence": self.evidence.model_dump(mode="json") if self.evidence else None,
            "warnings": [w.model_dump(mode="json") for w in self.warnings or []],
        }

    def to_html(self, path: str | os.PathLike[str] | None = None) -> str:
        """A self-contained HTML page of the run (answer and trace); written to ``path``.

        The evidence cells are highlighted in every table, and the warnings listed.

        Example:
            >>> "yes" in Prediction(answer="yes").to_html()
            True
        """
        return self.trace.to_html(path, answer=self.answer, error=self.error, **self._shown())

    def _repr_html_(self) -> str:
        return render_body(
            self.trace.to_dict(), answer=self.answer, error=self.error, **self._shown()
        )

    def _shown(self) -> dict[str, Any]:
        checks = self.checks()
        return {"evidence": checks["evidence"], "warnings": checks["warnings"]}

    def print(self, file: TextIO | None = None, *, max_rows: int = 20) -> None:
        """Print the steps, every intermediate table and the answer to the terminal.

        Evidence cells are marked in the tables; the evidence and warnings follow the
        answer.
        """
        self.trace.print(
            file, max_rows=max_rows, answer=self.answer, error=self.error, **self._shown()
        )
