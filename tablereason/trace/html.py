"""HTML rendering of traces: a self-contained page, or a fragment for notebooks.

Works on the JSON form of a trace (:meth:`tablereason.trace.Trace.to_dict`), so a
trace read back from a result file renders exactly like a live one. Each step shows
its operation and arguments, the table before and after it with added columns and
rows highlighted (and removed ones struck through), the raw model output on demand,
and its tokens and time. Given the answer's evidence and warnings
(:meth:`~tablereason.trace.Prediction.checks`), the page lists them under the answer
and marks the evidence cells in the input table and in every table after it. The
page has no scripts and loads nothing from the network.

Example:
    >>> page = render_page({"question": "q?", "steps": []}, answer="42")
    >>> page.startswith("<!doctype html>") and "42" in page
    True
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from tablereason.trace.answer_view import answer_html, marked
from tablereason.trace.runs_view import runs_html
from tablereason.trace.table_diff import TableDict, diff_tables, row_cell

STYLE = """
.trt{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;color:#1d2330;max-width:1200px}
.trt h1{font-size:1.35em;margin:.2em 0}.trt h2{font-size:1.05em;margin:0 0 .4em}
.trt .meta{color:#5b6475;font-size:.92em}.trt .answer{font-size:1.15em;font-weight:600}
.trt .ok{color:#0a7a2f}.trt .bad{color:#b3261e}
.trt .step{border:1px solid #d9dde5;border-radius:6px;padding:.7em .9em;margin:.8em 0}
.trt .step.failed{border-color:#e4a29c;background:#fff8f7}
.trt .kind{display:inline-block;font-size:.75em;text-transform:uppercase;letter-spacing:.05em;
 background:#eef1f6;border-radius:3px;padding:0 .4em;margin-right:.4em;color:#445}
.trt table.args{border-collapse:collapse;margin:.3em 0}
.trt table.args td{padding:.1em .6em .1em 0;vertical-align:top}
.trt table.args td:first-child{color:#5b6475}
.trt code,.trt pre{font:12.5px/1.4 ui-monospace,Menlo,Consolas,monospace}
.trt pre{white-space:pre-wrap;background:#f6f7f9;padding:.5em;border-radius:4px;margin:.3em 0}
.trt .tables{display:flex;flex-wrap:wrap;gap:1.2em;align-items:flex-start}
.trt .tables>div{overflow-x:auto;max-width:100%}
.trt table.data{border-collapse:collapse;font-size:.92em}
.trt table.data caption{text-align:left;font-weight:600;padding:.2em 0}
.trt table.data th,.trt table.data td{border:1px solid #d9dde5;padding:.15em .5em;text-align:left}
.trt table.data th{background:#f0f2f6}.trt table.data td.n{color:#8a93a3;text-align:right}
.trt .added{background:#dff5e3}.trt tr.added td{background:#dff5e3}
.trt .dropped{background:#fbe3e1;text-decoration:line-through;color:#8b3a33}
.trt tr.dropped td{background:#fbe3e1;text-decoration:line-through;color:#8b3a33}
.trt .legend span{padding:0 .4em;margin-right:.6em;border-radius:3px}
.trt details summary{cursor:pointer;color:#2a5db0}
.trt .error{color:#b3261e}.trt .note{color:#5b6475;font-style:italic}
.trt .expr{margin:.3em 0;font-weight:600}
.trt .evidence,.trt td.evidence{background:#fff1a8;outline:1px solid #d9b300}
.trt .warning{color:#8a5300;background:#fff6e0;padding:.2em .5em;border-radius:4px}
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def table_html(
    table: TableDict,
    *,
    title: str = "",
    columns: set[str] | frozenset[str] = frozenset(),
    rows: set[int] | frozenset[int] = frozenset(),
    mark: str = "added",
    max_rows: int = 60,
    evidence: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> str:
    """One table as HTML, with ``columns`` and ``rows`` (positions) given the class ``mark``.

    The ``evidence`` cells (``(row, column)``) get the class ``evidence``.

    Example:
        >>> "added" in table_html({"header": ["a"], "rows": [["1"]]}, columns={"a"})
        True
    """
    header = list(table.get("header") or [])
    body = list(table.get("rows") or [])
    total = row_count(table)
    caption = table.get("caption")
    cap = _esc(title) + (f" · {_esc(caption)}" if caption else "")
    flags = [" class='" + mark + "'" if c in columns else "" for c in header]
    out = [f"<table class='data'><caption>{cap} <span class='meta'>"]
    out.append(f"({total:,} rows × {len(header)} columns)</span></caption><thead><tr>")
    out.append(
        "<th>#</th>" + "".join(f"<th{f}>{_esc(c)}</th>" for c, f in zip(header, flags, strict=True))
    )
    out.append("</tr></thead><tbody>")
    for pos, row in enumerate(body[:max_rows]):
        klass = f" class='{mark}'" if pos in rows else ""
        cells = "".join(
            f"<td{_flag(flags, i, (pos, header[i]) in evidence if i < len(header) else False)}>"
            f"{_esc(row_cell(row, i))}</td>"
            for i in range(max(len(header), len(row)))
        )
        out.append(f"<tr{klass}><td class='n'>{pos + 1}</td>{cells}</tr>")
    out.append("</tbody></table>")
    shown = min(len(body), max_rows)
    if total > shown:
        out.append(f"<p class='meta'>… {total - shown:,} more rows not shown</p>")
    return "".join(out)


def _flag(flags: list[str], index: int, evidence: bool) -> str:
    if evidence:
        return " class='evidence'"
    return flags[index] if index < len(flags) else ""


def row_count(table: TableDict) -> int:
    """Rows of a table in a trace: ``num_rows`` when the trace kept only a window of it.

    Example:
        >>> row_count({"rows": [["a"]], "num_rows": 5000}), row_count({"rows": [["a"]]})
        (5000, 1)
    """
    rows = len(table.get("rows") or [])
    return int(table.get("num_rows") or rows)


def _windowed(table: TableDict) -> bool:
    return row_count(table) > len(table.get("rows") or [])


def _arguments_html(arguments: Mapping[str, Any]) -> str:
    if not arguments:
        return ""
    rows = "".join(
        f"<tr><td>{_esc(k)}</td><td><code>{_esc(_short_json(v))}</code></td></tr>"
        for k, v in arguments.items()
    )
    return f"<table class='args'>{rows}</table>"


def _expression_html(arguments: Mapping[str, Any]) -> str:
    """The condition or expression the model wrote, shown in full beside the step."""
    parts = []
    if arguments.get("condition"):
        parts.append(f"where <code>{_esc(arguments['condition'])}</code>")
    if arguments.get("expression"):
        name = _esc(arguments.get("name") or "")
        parts.append(f"new column <code>{name} = {_esc(arguments['expression'])}</code>")
    if "rows_before" in arguments and "rows_after" in arguments:
        parts.append(f"{int(arguments['rows_before']):,} → {int(arguments['rows_after']):,} rows")
    return f"<p class='expr'>{' · '.join(parts)}</p>" if parts else ""


def _short_json(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 400 else text[:400] + " …"


def _usage_text(step: Mapping[str, Any]) -> str:
    usage = step.get("usage") or {}
    parts = []
    if usage.get("requests"):
        parts.append(f"{usage['requests']} request(s)")
    tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    if tokens:
        parts.append(
            f"{tokens:,} tokens ({usage.get('prompt_tokens', 0):,} prompt + "
            f"{usage.get('completion_tokens', 0):,} completion)"
        )
    parts.append(f"{1000 * float(step.get('duration_s') or 0):.1f} ms")
    return " · ".join(parts)


def step_html(
    number: int,
    step: Mapping[str, Any],
    before: TableDict | None,
    evidence: tuple[set[tuple[int, str]], set[tuple[int, str]]] = (set(), set()),
) -> str:
    """One step: heading, arguments, note or error, tables before/after, raw output.

    ``evidence`` holds the evidence cells of the table before the step and after it.
    """
    failed = bool(step.get("error"))
    parts = [f"<section class='step{' failed' if failed else ''}' id='step-{number}'>"]
    parts.append(
        f"<h2><span class='kind'>{_esc(step.get('kind', ''))}</span>{number}. "
        f"{_esc(step.get('name', ''))}</h2>"
    )
    meta = _usage_text(step)
    if step.get("prompt_name"):
        meta = f"prompt <code>{_esc(step['prompt_name'])}</code> · " + meta
    parts.append(f"<div class='meta'>{meta}</div>")
    parts.append(_expression_html(step.get("arguments") or {}))
    parts.append(_arguments_html(step.get("arguments") or {}))
    if step.get("note"):
        parts.append(f"<p class='note'>{_esc(step['note'])}</p>")
    if failed:
        parts.append(f"<p class='error'>{_esc(step['error'])}</p>")
    after = step.get("table")
    if after is not None:
        parts.append(_tables_html(before, after, evidence))
    prompts = step.get("prompts") or []
    if prompts:
        items = "".join(f"<pre>{_esc(text)}</pre>" for text in prompts)
        parts.append(
            f"<details class='prompts'><summary>Prompt ({len(prompts)})</summary>{items}</details>"
        )
    raw = step.get("raw") or []
    if raw:
        items = "".join(f"<pre>{_esc(text)}</pre>" for text in raw)
        parts.append(f"<details><summary>Model output ({len(raw)})</summary>{items}</details>")
    parts.append("</section>")
    return "".join(parts)


def _tables_html(
    before: TableDict | None,
    after: TableDict,
    evidence: tuple[set[tuple[int, str]], set[tuple[int, str]]],
) -> str:
    old_cells, new_cells = evidence
    if before is None:
        shown = table_html(after, title="Table", evidence=new_cells)
        return f"<div class='tables'><div>{shown}</div></div>"
    if _windowed(before) or _windowed(after):
        # Only a window of a large table is kept: compare columns and row counts, not rows.
        diff = diff_tables({**before, "rows": []}, {**after, "rows": []})
        counts = f"{row_count(before):,} → {row_count(after):,} rows"
        if not diff.changed and row_count(before) == row_count(after):
            counts = f"{row_count(after):,} rows, unchanged or reordered"
        old = table_html(
            before, title="Before", columns=diff.dropped_columns, mark="dropped", evidence=old_cells
        )
        new = table_html(
            after, title="After", columns=diff.added_columns, mark="added", evidence=new_cells
        )
        return (
            f"<p class='meta'>{counts}; the first rows of each table are shown.</p>"
            f"<div class='tables'><div>{old}</div><div>{new}</div></div>"
        )
    diff = diff_tables(before, after)
    if not diff.changed:
        return (
            "<p class='meta'>Table unchanged.</p><div class='tables'><div>"
            f"{table_html(after, title='Table', evidence=new_cells)}</div></div>"
        )
    old = table_html(
        before,
        title="Before",
        columns=diff.dropped_columns,
        rows=diff.dropped_rows,
        mark="dropped",
        evidence=old_cells,
    )
    new = table_html(
        after,
        title="After",
        columns=diff.added_columns,
        rows=diff.added_rows,
        mark="added",
        evidence=new_cells,
    )
    note = "<p class='meta'>Rows reordered.</p>" if diff.reordered else ""
    return f"{note}<div class='tables'><div>{old}</div><div>{new}</div></div>"


def _answer_text(answer: Any) -> str:
    if isinstance(answer, list):
        return " | ".join(str(a) for a in answer)
    return "" if answer is None else str(answer)


def render_body(
    trace: Mapping[str, Any],
    *,
    answer: Any = None,
    error: str | None = None,
    extra: Mapping[str, Any] | None = None,
    evidence: Mapping[str, Any] | None = None,
    warnings: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The trace as an HTML fragment inside ``<div class="trt">`` (styles included).

    Args:
        trace: The trace's JSON form.
        answer: The final answer to show (a string or a list).
        error: Why the run failed, if it did.
        extra: More header lines (``{"gold": ..., "score": ..., "id": ...}``).
        evidence: The answer's evidence (JSON form): listed, and marked in the tables.
        warnings: The answer's warnings (JSON form).
    """
    steps = list(trace.get("steps") or [])
    parts = [f"<div class='trt'><style>{STYLE}</style>"]
    parts.append(f"<h1>{_esc(trace.get('question', ''))}</h1>")
    facts = []
    if trace.get("method"):
        facts.append(f"method <code>{_esc(trace['method'])}</code>")
    usage = trace.get("usage") or _sum_usage(steps)
    tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    facts.append(f"{len(steps)} steps · {usage.get('requests', 0)} requests · {tokens:,} tokens")
    total_s = sum(float(s.get("duration_s") or 0) for s in steps)
    facts.append(f"{total_s:.2f} s")
    parts.append(f"<p class='meta'>{' · '.join(facts)}</p>")
    if answer is not None or error is None:
        parts.append(f"<p>Answer: <span class='answer'>{_esc(_answer_text(answer))}</span></p>")
    if error:
        parts.append(f"<p class='error'>Failed: {_esc(error)}</p>")
    parts.append(answer_html(evidence, warnings))
    for key, value in (extra or {}).items():
        if key == "score" and value is not None:
            verdict = "ok'>correct" if float(value) >= 1 else "bad'>wrong"
            parts.append(f"<p>Score: {float(value):g} <span class='{verdict}</span></p>")
        elif value is not None:
            parts.append(f"<p>{_esc(key)}: <code>{_esc(_short_json(value))}</code></p>")
    chain = [
        s.get("name", "") for s in steps if s.get("kind") == "operation" and not s.get("error")
    ]
    if chain:
        parts.append(f"<p class='meta'>Chain: {' → '.join(_esc(c) for c in chain)}</p>")
    parts.append(
        "<p class='legend meta'><span class='added'>added</span>"
        "<span class='dropped'>removed</span>"
        + ("<span class='evidence'>evidence</span>" if evidence else "")
        + "</p>"
    )
    before: TableDict | None = None
    before_cells: set[tuple[int, str]] = set()
    for number, step in enumerate(steps, start=1):
        cells = marked(evidence, number - 1)
        parts.append(step_html(number, step, before, (before_cells, cells)))
        if step.get("table") is not None:
            before, before_cells = step["table"], cells
    parts.append(runs_html(trace, _steps_html))
    parts.append("</div>")
    return "".join(parts)


def _steps_html(trace: Mapping[str, Any]) -> str:
    """The steps of one sub-run, each with its table (no evidence marks: they cite the input)."""
    parts = []
    before: TableDict | None = None
    for number, step in enumerate(trace.get("steps") or [], start=1):
        parts.append(step_html(number, step, before, (set(), set())))
        if step.get("table") is not None:
            before = step["table"]
    return "".join(parts)


def _sum_usage(steps: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    total = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0}
    for step in steps:
        for key in total:
            total[key] += int((step.get("usage") or {}).get(key, 0))
    return total


def render_page(
    trace: Mapping[str, Any],
    *,
    answer: Any = None,
    error: str | None = None,
    extra: Mapping[str, Any] | None = None,
    title: str | None = None,
    back_link: str | None = None,
    evidence: Mapping[str, Any] | None = None,
    warnings: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """A complete, self-contained HTML page for one trace.

    Args:
        trace: The trace's JSON form.
        answer: Final answer to show.
        error: Failure message, if any.
        extra: More header lines (gold answer, score, example id).
        title: Page title (defaults to the question).
        back_link: Relative URL of the page to link back to (an evaluation report).
        evidence: The answer's evidence (listed, and marked in the tables).
        warnings: The answer's warnings.
    """
    heading = title or str(trace.get("question") or "trace")
    back = f"<p><a href='{_esc(back_link)}'>← report</a></p>" if back_link else ""
    body = render_body(
        trace, answer=answer, error=error, extra=extra, evidence=evidence, warnings=warnings
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{_esc(heading)}</title></head><body>{back}{body}</body></html>"
    )
