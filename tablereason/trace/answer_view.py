"""The checked answer as pages and terminals show it: evidence lines, warnings, marked cells.

Works on the JSON forms of :meth:`tablereason.trace.Prediction.checks` (``evidence`` and
``warnings``), so a prediction read back from a result file shows like a live one.
Every text that came from a table or a model is passed through
:func:`~tablereason.trace.terminal.visible` for terminals and escaped for pages.

Example:
    >>> evidence = {"status": "found", "how": "the cells that equal the answer", "total": 1,
    ...             "cells": [{"row": 12, "column": "year", "value": "1985"}]}
    >>> evidence_lines(evidence)
    ['Evidence: row 13, year = 1985']
    >>> warning_lines([{"code": "sentence", "message": "the answer is a sentence"}])
    ['Warning [sentence]: the answer is a sentence']
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from tablereason.trace.terminal import visible

SHOWN_CELLS = 10
"""Evidence cells a terminal lists (a page lists every cell the evidence keeps)."""

Checks = Mapping[str, Any]


def evidence_lines(evidence: Checks | None, *, limit: int = SHOWN_CELLS) -> list[str]:
    """``Evidence:`` lines: one per cell (row numbers from 1, as tables show them).

    Evidence that is not available, or absent, is one line saying why.
    """
    if not evidence:
        return []
    cells = list(evidence.get("cells") or [])
    if evidence.get("status") != "found" or not cells:
        return [f"Evidence: none ({visible(str(evidence.get('how') or 'not available'))})"]
    lines = [
        f"Evidence: row {int(c['row']) + 1}, {visible(str(c['column']))} = "
        f"{visible(str(c['value']))}"
        for c in cells[:limit]
    ]
    more = int(evidence.get("total") or len(cells)) - min(len(cells), limit)
    if more > 0:
        lines.append(f"Evidence: … and {more:,} more cells")
    for reason in evidence.get("untraced") or []:
        lines.append(f"Evidence: (untraced: {visible(str(reason))})")
    return lines


def warning_lines(warnings: Sequence[Checks] | None) -> list[str]:
    """``Warning [code]: sentence`` lines, one per warning."""
    return [
        f"Warning [{visible(str(w.get('code')))}]: {visible(str(w.get('message')), lines=True)}"
        for w in warnings or []
    ]


def checked_lines(
    answer: Any,
    error: str | None,
    evidence: Checks | None,
    warnings: Sequence[Checks] | None,
) -> list[str]:
    """The lines that follow an answer: its evidence, then its warnings.

    A run without an answer has no evidence to show, and the ``chain_error`` warning
    repeats the failure that is shown already when there is an ``error``.

    Example:
        >>> checked_lines([], "boom", {"status": "none"}, [{"code": "chain_error",
        ...               "message": "the run stopped on an error: boom"}])
        []
    """
    items = answer if isinstance(answer, list) else [answer]
    answered = any(str(item).strip() for item in items if item is not None)
    shown = [w for w in warnings or [] if not (error and w.get("code") == "chain_error")]
    return (evidence_lines(evidence) if answered else []) + warning_lines(shown)


def marked(evidence: Checks | None, step: int) -> set[tuple[int, str]]:
    """The ``(row, column)`` cells of trace step ``step``'s table to highlight.

    Example:
        >>> marked({"marks": {"2": [[0, "year"]]}}, 2)
        {(0, 'year')}
    """
    marks = (evidence or {}).get("marks") or {}
    found = marks.get(str(step), marks.get(step)) or []
    return {(int(row), str(column)) for row, column in found}


def answer_html(evidence: Checks | None, warnings: Sequence[Checks] | None) -> str:
    """The evidence (every cell kept) and the warnings, as an HTML fragment."""
    parts = []
    for warning in warnings or []:
        parts.append(
            f"<p class='warning'>Warning <code>{_esc(warning.get('code'))}</code>: "
            f"{_esc(warning.get('message'))}</p>"
        )
    if evidence:
        cells = list(evidence.get("cells") or [])
        how = _esc(evidence.get("how") or "")
        if evidence.get("status") == "found" and cells:
            total = int(evidence.get("total") or len(cells))
            listed = "".join(
                f"<li>row {int(c['row']) + 1}, {_esc(c['column'])} = "
                f"<span class='evidence'>{_esc(c['value'])}</span></li>"
                for c in cells
            )
            more = f"<li>… and {total - len(cells):,} more cells</li>" if total > len(cells) else ""
            parts.append(
                f"<details class='cells'><summary>Evidence: {total:,} cell(s) of the input "
                f"table, {how}</summary><ul class='cells'>{listed}{more}</ul></details>"
            )
        else:
            parts.append(f"<p class='meta'>Evidence: none ({how or 'not available'})</p>")
        for reason in evidence.get("untraced") or []:
            parts.append(f"<p class='meta'>Untraced: {_esc(reason)}</p>")
    return "".join(parts)


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)
