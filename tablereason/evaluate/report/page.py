"""Evaluation reports: scores, breakdowns, tokens and cost, the paper's analyses, pages.

:func:`summarize` reads a result file into a :class:`Report`; :func:`build_report`
also writes ``report.html`` beside it and one trace page per example under
``examples/``, linked from the report. The plots (accuracy by chain length, as the
Chain-of-Table paper's Figure 4 / Table 5 analysis, and by table size in rows) are
inline SVG, so the page needs nothing else.

Example:
    >>> report = build_report("runs/wikitq")  # doctest: +SKIP
    >>> print(report.to_text())  # doctest: +SKIP
"""

from __future__ import annotations

import html
import os
import re
import statistics
from hashlib import sha1
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tablereason.evaluate.report.accuracy import per_correct_text, wilson
from tablereason.evaluate.report.svg import bar_chart
from tablereason.evaluate.report.warned import WarningSummary, summarize_warnings
from tablereason.evaluate.results import PAGES_DIR, REPORT_FILE, find_results, read_results
from tablereason.evaluate.run_folder import check_inside, write_inside
from tablereason.trace.html import render_page

SIZE_BINS = ((10, "1–10"), (20, "11–20"), (40, "21–40"), (80, "41–80"))
MAX_CHAIN = 5


class Bucket(BaseModel):
    """Accuracy of one group of examples."""

    label: str
    n: int
    correct: float

    @property
    def accuracy(self) -> float:
        """Mean score of the group."""
        return self.correct / self.n if self.n else 0.0


class ExampleRow(BaseModel):
    """One example's line in a report."""

    id: str
    score: float | None = None
    answer: Any = None
    gold: Any = None
    error: str | None = None
    duration_s: float = 0.0
    tokens: int = 0
    operations: int | None = None
    table_rows: int | None = None
    warnings: list[str] = Field(default_factory=list)
    page: str | None = None


class Report(BaseModel):
    """What a run achieved, and where its time and tokens went.

    ``score`` divides by ``total`` (examples asked for): examples not yet run count
    as wrong, as failed ones do.
    """

    results: str
    html: str | None = None
    config: dict[str, Any]
    total: int
    done: int
    failed: int
    metric: str | None
    score: float | None
    correct: float
    companions: dict[str, float] = Field(default_factory=dict)
    breakdown: list[Bucket] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    cost: float = 0.0
    mean_s: float = 0.0
    p90_s: float = 0.0
    by_chain_length: list[Bucket] = Field(default_factory=list)
    by_table_size: list[Bucket] = Field(default_factory=list)
    slowest: list[ExampleRow] = Field(default_factory=list)
    failures: list[ExampleRow] = Field(default_factory=list)
    examples: list[ExampleRow] = Field(default_factory=list)
    warnings: WarningSummary = Field(default_factory=WarningSummary)

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% interval of the score (Wilson's; see :mod:`.accuracy`)."""
        return wilson(self.correct, self.total)

    def interval_text(self) -> str:
        """The score's 95% interval, as percentages."""
        low, high = self.interval
        return f"95% interval {100 * low:.1f}-{100 * high:.1f}%"

    def per_correct(self) -> str:
        """What one correct answer cost: requests, tokens, seconds and dollars."""
        return per_correct_text(
            correct=self.correct, requests=self.requests,
            tokens=self.prompt_tokens + self.completion_tokens,
            seconds=self.mean_s * self.done, cost=self.cost,
        )  # fmt: skip

    def to_text(self) -> str:
        """A short plain-text summary for the terminal."""
        c = self.config
        lines = [f"{c.get('dataset')}/{c.get('split')} · {c.get('method')} · {c.get('model')}"]
        if self.score is not None:
            lines.append(
                f"{self.metric}: {100 * self.score:.2f}% "
                f"({self.correct:g} of {self.total}; {self.done} run, {self.failed} failed), "
                f"{self.interval_text()}"
            )
        else:
            lines.append(f"{self.done} of {self.total} run, {self.failed} failed (no metric)")
        for name, value in self.companions.items():
            lines.append(f"{name}: {100 * value:.2f}% (same answers, companion metric)")
        for bucket in self.breakdown:
            lines.append(f"  {bucket.label}: {100 * bucket.accuracy:.2f}% (n={bucket.n})")
        lines.append(
            f"tokens {self.prompt_tokens + self.completion_tokens:,} "
            f"({self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion), "
            f"{self.requests:,} requests, cost ${self.cost:.4f}"
        )
        lines.append(f"time per example: mean {self.mean_s:.2f} s, p90 {self.p90_s:.2f} s")
        if self.score is not None:
            lines.append(self.per_correct())
        lines.extend(self.warnings.to_text())
        if self.html:
            lines.append(f"report: {self.html}")
        return "\n".join(lines)


def page_name(example_id: str) -> str:
    """A safe, unique file name for an example's page.

    Example:
        >>> page_name("nt-12"), page_name("a/b")[:4]
        ('nt-12.html', 'a_b-')
    """
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", example_id)[:80]
    if safe != example_id:
        safe += "-" + sha1(example_id.encode("utf-8")).hexdigest()[:8]
    return safe + ".html"


def _row(record: dict[str, Any], page: str | None) -> ExampleRow:
    return ExampleRow(
        id=str(record["id"]),
        score=record.get("score"),
        answer=record.get("answer"),
        gold=record.get("gold"),
        error=record.get("error"),
        duration_s=float(record.get("duration_s") or 0.0),
        tokens=int(record.get("prompt_tokens", 0)) + int(record.get("completion_tokens", 0)),
        operations=_operations(record),
        table_rows=_table_rows(record),
        warnings=[str(w.get("code")) for w in record.get("warnings") or [] if isinstance(w, dict)],
        page=page,
    )


def _operations(record: dict[str, Any]) -> int | None:
    if record.get("operations") is not None:
        return int(record["operations"])
    steps = (record.get("trace") or {}).get("steps")
    if not steps:
        return None
    return sum(1 for s in steps if s.get("kind") == "operation" and not s.get("error"))


def _table_rows(record: dict[str, Any]) -> int | None:
    if record.get("table_rows") is not None:
        return int(record["table_rows"])
    for step in (record.get("trace") or {}).get("steps") or []:
        if step.get("table"):
            return len(step["table"].get("rows") or [])
    return None


def _buckets(pairs: list[tuple[str, float]], order: list[str]) -> list[Bucket]:
    found: dict[str, list[float]] = {}
    for label, score in pairs:
        found.setdefault(label, []).append(score)
    return [Bucket(label=k, n=len(found[k]), correct=sum(found[k])) for k in order if k in found]


def _size_label(rows: int) -> str:
    for bound, label in SIZE_BINS:
        if rows <= bound:
            return label
    return f">{SIZE_BINS[-1][0]}"


def _companions(records: list[dict[str, Any]], total: int) -> dict[str, float]:
    """Companion metrics' scores (``companion_scores`` of each record) over ``total``."""
    sums: dict[str, float] = {}
    for record in records:
        for name, value in (record.get("companion_scores") or {}).items():
            sums[name] = sums.get(name, 0.0) + float(value or 0.0)
    return {name: value / total if total else 0.0 for name, value in sums.items()}


def summarize(path: str | os.PathLike[str], *, top: int = 10) -> Report:
    """Read a run folder (or result file) into a :class:`Report`; writes nothing.

    Args:
        path: The run folder or its ``results.jsonl``.
        top: How many slowest examples to list.
    """
    results = find_results(path)
    config, records, _ = read_results(results)
    total = int(config.extra.get("total") or len(records))
    scored = [r for r in records if r.get("score") is not None]
    correct = sum(float(r["score"]) for r in scored)
    groups: list[tuple[str, float]] = [
        (str(g), float(r.get("score") or 0.0)) for r in records for g in r.get("groups") or []
    ]
    group_order = sorted({g for g, _ in groups})
    chain = [
        (str(min(n, MAX_CHAIN)) if n < MAX_CHAIN else f"{MAX_CHAIN}+", float(r.get("score") or 0))
        for r in scored
        if (n := _operations(r)) is not None
    ]
    sizes = [
        (_size_label(n), float(r.get("score") or 0))
        for r in scored
        if (n := _table_rows(r)) is not None
    ]
    size_order = [label for _, label in SIZE_BINS] + [f">{SIZE_BINS[-1][0]}"]
    durations = sorted(float(r.get("duration_s") or 0.0) for r in records)
    rows = [_row(r, None) for r in records]
    return Report(
        results=str(results),
        config=config.model_dump(),
        total=total,
        done=len(records),
        failed=sum(1 for r in records if r.get("error")),
        metric=config.metric,
        score=(correct / total if total else 0.0) if scored or config.metric else None,
        correct=correct,
        companions=_companions(records, total),
        breakdown=_buckets(groups, group_order),
        prompt_tokens=sum(int(r.get("prompt_tokens", 0)) for r in records),
        completion_tokens=sum(int(r.get("completion_tokens", 0)) for r in records),
        requests=sum(int(r.get("requests", 0)) for r in records),
        cost=sum(float(r.get("cost") or 0.0) for r in records),
        mean_s=statistics.fmean(durations) if durations else 0.0,
        p90_s=durations[int(0.9 * (len(durations) - 1))] if durations else 0.0,
        by_chain_length=_buckets(chain, [str(i) for i in range(MAX_CHAIN)] + [f"{MAX_CHAIN}+"]),
        by_table_size=_buckets(sizes, size_order),
        slowest=sorted(rows, key=lambda r: -r.duration_s)[:top],
        failures=[r for r in rows if r.error],
        examples=rows,
        warnings=summarize_warnings(records),
    )


def build_report(
    path: str | os.PathLike[str], *, out_dir: str | os.PathLike[str] | None = None, top: int = 10
) -> Report:
    """Summarise a run and write ``report.html`` plus one page per example.

    Args:
        path: The run folder or its ``results.jsonl``.
        out_dir: Where to write (the result file's folder by default).
        top: How many slowest examples to list.

    Returns:
        The :class:`Report`, with ``html`` set to the report page.

    Raises:
        RunFolderError: When a symlink in the folder (``report.html``, ``examples/`` or a
            page) leads outside it: nothing is written through it.
    """
    report = summarize(path, top=top)
    target = Path(out_dir) if out_dir is not None else Path(report.results).parent
    for relative in (REPORT_FILE, PAGES_DIR):  # refuse before writing anything
        check_inside(target, target / relative)
    _, records, _ = read_results(report.results)
    links: dict[str, str] = {}
    for record in records:
        trace = record.get("trace")
        if not isinstance(trace, dict) or "steps" not in trace:
            continue
        name = page_name(str(record["id"]))
        extra = {"example": record["id"], "gold": record.get("gold"), "score": record.get("score")}
        page = render_page(
            trace,
            answer=record.get("answer"),
            error=record.get("error"),
            extra=extra,
            title=f"{record['id']}: {trace.get('question', '')}",
            back_link=f"../{REPORT_FILE}",
            evidence=record.get("evidence"),
            warnings=record.get("warnings"),
        )
        write_inside(target, f"{PAGES_DIR}/{name}", page)
        links[str(record["id"])] = f"{PAGES_DIR}/{name}"
    for row in [*report.slowest, *report.failures, *report.examples]:
        row.page = links.get(row.id)
    report.html = str(target / REPORT_FILE)
    write_inside(target, REPORT_FILE, render_report(report))
    return report


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;color:#1d2330;margin:1.5em;
max-width:1200px}h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.92em}th,td{border:1px solid #d9dde5;padding:.2em .55em;
text-align:left;vertical-align:top}th{background:#f0f2f6}.meta{color:#5b6475}
.big{font-size:1.6em;font-weight:600}.charts{display:flex;flex-wrap:wrap;gap:1.5em}
.bad{color:#b3261e}.ok{color:#0a7a2f}code{font:12.5px ui-monospace,Menlo,Consolas,monospace}
"""


def _e(value: Any) -> str:
    if isinstance(value, list):
        value = " | ".join(str(v) for v in value)
    return html.escape("" if value is None else str(value), quote=True)


def _link(row: ExampleRow) -> str:
    return f"<a href='{_e(row.page)}'>{_e(row.id)}</a>" if row.page else _e(row.id)


def _rows_table(rows: list[ExampleRow], *, show_error: bool = False) -> str:
    if not rows:
        return "<p class='meta'>none</p>"
    head = "<tr><th>example</th><th>score</th><th>answer</th><th>gold</th><th>operations</th>"
    head += "<th>rows</th><th>tokens</th><th>time (s)</th><th>warnings</th>"
    head += "<th>error</th></tr>" if show_error else "</tr>"
    body = []
    for r in rows:
        score = "" if r.score is None else f"{r.score:g}"
        klass = "ok" if r.score is not None and r.score >= 1 else "bad"
        cells = (
            f"<td>{_link(r)}</td><td class='{klass}'>{score}</td><td>{_e(r.answer)}</td>"
            f"<td>{_e(r.gold)}</td><td>{_e(r.operations)}</td><td>{_e(r.table_rows)}</td>"
            f"<td>{r.tokens:,}</td><td>{r.duration_s:.2f}</td><td>{_e(r.warnings)}</td>"
        )
        if show_error:
            cells += f"<td>{_e(r.error)}</td>"
        body.append(f"<tr>{cells}</tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _bars(buckets: list[Bucket]) -> list[tuple[str, float, int]]:
    return [(b.label, b.accuracy, b.n) for b in buckets]


def render_report(report: Report) -> str:
    """The report as a self-contained HTML page."""
    c = report.config
    title = f"{c.get('dataset')}/{c.get('split')} · {c.get('method')}"
    score = "n/a" if report.score is None else f"{100 * report.score:.2f}%"
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class='meta'>model <code>{_e(c.get('model'))}</code> · profile "
        f"<code>{_e(c.get('profile'))}</code> · library {_e(c.get('library_version'))}</p>",
        f"<p><span class='big'>{score}</span> {_e(report.metric)} · {report.correct:g} of "
        f"{report.total} correct · {report.done} run · {report.failed} failed · "
        f"{_e(report.interval_text())}</p>",
        *(
            f"<p>{100 * value:.2f}% {_e(name)} (same answers, companion metric)</p>"
            for name, value in report.companions.items()
        ),
        f"<p>Tokens {report.prompt_tokens + report.completion_tokens:,} "
        f"({report.prompt_tokens:,} prompt + {report.completion_tokens:,} completion) · "
        f"{report.requests:,} requests · cost ${report.cost:.4f} · "
        f"{report.mean_s:.2f} s per example (p90 {report.p90_s:.2f} s)</p>",
        f"<p>{_e(report.per_correct())}</p>",
    ]
    if report.breakdown:
        rows = "".join(
            f"<tr><td>{_e(b.label)}</td><td>{100 * b.accuracy:.2f}%</td><td>{b.n}</td></tr>"
            for b in report.breakdown
        )
        parts.append(
            f"<h2>Breakdown</h2><table><tr><th>group</th><th>score</th><th>n</th></tr>{rows}"
            "</table>"
        )
    parts.append(report.warnings.to_html())
    parts.append("<h2>Analyses</h2><div class='charts'>")
    parts.append(
        bar_chart(
            "Accuracy by chain length",
            _bars(report.by_chain_length),
            x_label="operations applied",
        )
    )
    parts.append(
        bar_chart("Accuracy by table size", _bars(report.by_table_size), x_label="table rows")
    )
    parts.append("</div>")
    parts.append(f"<h2>Slowest examples</h2>{_rows_table(report.slowest)}")
    parts.append(
        f"<h2>Failed examples ({len(report.failures)})</h2>"
        f"{_rows_table(report.failures, show_error=True)}"
    )
    parts.append(
        f"<h2>All examples</h2><details><summary>{report.done} examples</summary>"
        f"{_rows_table(report.examples, show_error=True)}</details>"
    )
    parts.append(f"<p class='meta'>results: <code>{_e(report.results)}</code></p></body></html>")
    return "".join(parts)
