"""The warnings of a run: how many answers each code flagged, and accuracy with and without them.

Each result record keeps its answer's warnings (:mod:`tablereason.answers`). A run's
:class:`WarningSummary` counts them by code and splits the answered examples into
warned and unwarned ones, so a report shows what dropping the warned answers would
do to accuracy, and how many wrong and right answers the warnings flag. Records
written before answers were checked have no ``warnings`` field and are left out.

Example:
    >>> records = [{"score": 0.0, "warnings": [{"code": "empty_table", "message": "..."}]},
    ...            {"score": 1.0, "warnings": []}, {"score": 1.0, "warnings": []}]
    >>> summary = summarize_warnings(records)
    >>> summary.by_code, summary.accuracy_unwarned, summary.wrong_warned
    ({'empty_table': 1}, 1.0, 1)
"""

from __future__ import annotations

import html
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field


class WarningSummary(BaseModel):
    """Warnings over the checked records of a run.

    Attributes:
        checked: Records that carry their checks (a ``warnings`` field).
        warned: Those with at least one warning.
        by_code: How many records each code flagged.
        accuracy_all: Mean score of the checked, scored records.
        accuracy_unwarned: Mean score of the unwarned ones (``None`` when there are none).
        accuracy_warned: Mean score of the warned ones (``None`` when there are none).
        wrong: Checked records scored below 1; ``wrong_warned`` of them warned.
        right: Checked records scored 1; ``right_warned`` of them warned.
    """

    checked: int = 0
    warned: int = 0
    by_code: dict[str, int] = Field(default_factory=dict)
    accuracy_all: float | None = None
    accuracy_unwarned: float | None = None
    accuracy_warned: float | None = None
    wrong: int = 0
    wrong_warned: int = 0
    right: int = 0
    right_warned: int = 0

    def to_text(self) -> list[str]:
        """Lines for the terminal summary (none when no record was checked)."""
        if not self.checked:
            return []
        codes = ", ".join(f"{code} {n}" for code, n in self.by_code.items()) or "none"
        lines = [f"warnings: {self.warned} of {self.checked} answers ({codes})"]
        if self.accuracy_all is not None:
            lines.append(
                f"  accuracy {_percent(self.accuracy_all)} over all checked answers, "
                f"{_percent(self.accuracy_unwarned)} without the warned ones, "
                f"{_percent(self.accuracy_warned)} of the warned ones"
            )
            lines.append(
                f"  warned: {self.wrong_warned} of {self.wrong} wrong answers, "
                f"{self.right_warned} of {self.right} right ones"
            )
        return lines

    def to_html(self) -> str:
        """The summary as an HTML section (empty when no record was checked)."""
        if not self.checked:
            return ""
        rows = "".join(
            f"<tr><td><code>{html.escape(code)}</code></td><td>{n}</td></tr>"
            for code, n in self.by_code.items()
        )
        table = f"<table><tr><th>code</th><th>answers</th></tr>{rows}</table>" if rows else ""
        return (
            f"<h2>Warnings</h2><p>{self.warned} of {self.checked} answers warned · accuracy "
            f"{_percent(self.accuracy_all)} over all, {_percent(self.accuracy_unwarned)} "
            f"without the warned answers, {_percent(self.accuracy_warned)} of the warned · "
            f"{self.wrong_warned} of {self.wrong} wrong and {self.right_warned} of "
            f"{self.right} right answers warned</p>{table}"
        )


def summarize_warnings(records: list[dict[str, Any]]) -> WarningSummary:
    """Count the warnings of result records (see module notes)."""
    checked = [r for r in records if isinstance(r.get("warnings"), list)]
    codes: Counter[str] = Counter()
    warned_scores: list[float] = []
    clean_scores: list[float] = []
    summary = WarningSummary(checked=len(checked))
    for record in checked:
        found = {str(w.get("code")) for w in record["warnings"] if isinstance(w, dict)}
        codes.update(found)
        score = record.get("score")
        if score is None:
            continue
        right = float(score) >= 1
        (warned_scores if found else clean_scores).append(float(score))
        summary.right += right
        summary.wrong += not right
        summary.right_warned += right and bool(found)
        summary.wrong_warned += (not right) and bool(found)
    summary.warned = sum(1 for r in checked if r["warnings"])
    summary.by_code = dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])))
    scores = warned_scores + clean_scores
    summary.accuracy_all = _mean(scores)
    summary.accuracy_unwarned = _mean(clean_scores)
    summary.accuracy_warned = _mean(warned_scores)
    return summary


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"
