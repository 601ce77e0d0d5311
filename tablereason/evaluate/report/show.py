"""Showing a run in the terminal: its summary and examples, or one example step by step.

Example:
    >>> show("runs/wikitq", example="nt-0")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TextIO

from tablereason.errors import ConfigurationError, did_you_mean
from tablereason.evaluate.report.page import summarize
from tablereason.evaluate.results import find_results, read_results
from tablereason.trace.console import print_trace
from tablereason.trace.html import render_page
from tablereason.trace.terminal import visible


def find_record(path: str | os.PathLike[str], example: str) -> dict[str, Any]:
    """The result record of ``example`` in a run folder or result file.

    Raises:
        ConfigurationError: When the run has no such example (the closest ids are named).
    """
    _, records, _ = read_results(find_results(path))
    for record in records:
        if str(record["id"]) == example:
            return record
    ids = [str(r["id"]) for r in records]
    message = did_you_mean(example, ids[:2000], kind="example")
    if len(message) > 400:
        message = message[:400] + " …"
    raise ConfigurationError(message)


def show(
    path: str | os.PathLike[str],
    *,
    example: str | None = None,
    html: str | os.PathLike[str] | None = None,
    max_rows: int = 20,
    file: TextIO | None = None,
    prompts: bool = False,
) -> None:
    """Print a run's summary and examples, or one example's steps and tables.

    Args:
        path: Run folder or result file.
        example: Example id to show step by step (with its intermediate tables).
        html: With ``example``: also write the example's page here.
        max_rows: Rows shown per table.
        file: Output stream (standard output by default).
        prompts: With ``example``: also print the exact text of every prompt.

    Raises:
        ConfigurationError: For an unknown example id, or ``html`` without ``example``.
    """
    out = file or sys.stdout
    if example is None:
        if html is not None:
            raise ConfigurationError("--html needs --example; `tablereason report` writes pages")
        report = summarize(path)
        out.write(visible(report.to_text(), lines=True) + "\n\n")
        out.write(f"{'example':<28} {'score':>5} {'ops':>3} {'rows':>5} {'time s':>7}  error\n")
        for row in report.examples:
            score = "" if row.score is None else f"{row.score:g}"
            ops = "" if row.operations is None else str(row.operations)
            rows = "" if row.table_rows is None else str(row.table_rows)
            error = visible(row.error or "")[:60]
            name = visible(row.id)[:28]
            out.write(f"{name:<28} {score:>5} {ops:>3} {rows:>5} {row.duration_s:>7.2f}  {error}\n")
        return
    record = find_record(path, example)
    trace = record.get("trace")
    if not isinstance(trace, dict) or "steps" not in trace:
        raise ConfigurationError(
            f"example {example!r} has no trace in this run (it ran with traces off); rerun "
            "it without --no-traces to see its steps"
        )
    gold, score = visible(repr(record.get("gold"))), visible(record.get("score"))
    out.write(f"Example {visible(example)} · gold {gold} · score {score}\n")
    evidence, warnings = record.get("evidence"), record.get("warnings")
    print_trace(
        trace,
        file=out,
        max_rows=max_rows,
        answer=record.get("answer"),
        error=record.get("error"),
        evidence=evidence,
        warnings=warnings,
        prompts=prompts,
    )
    if html is not None:
        extra = {"example": example, "gold": record.get("gold"), "score": record.get("score")}
        page = render_page(
            trace,
            answer=record.get("answer"),
            error=record.get("error"),
            extra=extra,
            evidence=evidence,
            warnings=warnings,
        )
        Path(html).write_text(page, encoding="utf-8")
        out.write(f"page: {html}\n")
