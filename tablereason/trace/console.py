"""Terminal rendering of traces: each step, each intermediate table, and the answer.

Uses ``rich`` when it is installed (coloured tables, added columns and rows in
green); otherwise prints plain text tables. Works on the JSON form of a trace. Every
text that came from a table or a model (cells, names, arguments, replies, errors) is
shown through :func:`tablereason.trace.terminal.visible`, so control characters in it are
printed as escapes instead of acting on the terminal. A table that the trace kept as
a window of its first rows is captioned with its full row count.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> print_trace({"question": "q?", "steps": [{"kind": "input", "name": "table",
    ...     "table": {"header": ["a"], "rows": [["1"]]}}]}, file=out, answer="1", plain=True)
    >>> "Answer: 1" in out.getvalue()
    True
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from tablereason.trace.html import TableDict, TableDiff, diff_tables, row_count
from tablereason.trace.terminal import visible


def _answer_text(answer: Any) -> str:
    if isinstance(answer, list):
        return " | ".join(visible(a) for a in answer)
    return "" if answer is None else visible(answer, lines=True)


def _args_text(arguments: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in arguments.items() if k not in ("allowed", "chain")}
    text = ", ".join(
        f"{visible(k)}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in shown.items()
    )
    text = visible(text)
    return text if len(text) <= 160 else text[:160] + " …"


def _usage_text(step: Mapping[str, Any]) -> str:
    usage = step.get("usage") or {}
    tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    ms = 1000 * float(step.get("duration_s") or 0)
    return f"{tokens:,} tokens, {ms:.0f} ms" if tokens else f"{ms:.0f} ms"


def print_trace(
    trace: Mapping[str, Any],
    *,
    file: TextIO | None = None,
    max_rows: int = 20,
    answer: Any = None,
    error: str | None = None,
    plain: bool | None = None,
) -> None:
    """Print a trace (its JSON form) step by step, then the answer.

    Args:
        trace: The trace's JSON form (:meth:`tablereason.trace.Trace.to_dict`).
        file: Output stream; standard output by default.
        max_rows: Rows shown per table.
        answer: The final answer to print.
        error: Failure message to print.
        plain: Force plain text (``True``) or rich (``False``); by default rich when
            installed.
    """
    stream = file or sys.stdout
    use_rich = not plain
    if use_rich:
        try:
            import rich  # noqa: F401
        except ImportError:
            use_rich = False
    if use_rich:
        _print_rich(trace, stream, max_rows, answer, error)
    else:
        _print_plain(trace, stream, max_rows, answer, error)


def _diff(before: TableDict | None, table: TableDict) -> tuple[TableDiff | None, bool]:
    """What to highlight (``None`` when nothing came before), and whether it changed.

    Tables kept as a window are compared by columns and row counts only.
    """
    if before is None:
        return None, True
    if row_count(before) > len(before.get("rows") or []) or row_count(table) > len(
        table.get("rows") or []
    ):
        diff = diff_tables({**before, "rows": []}, {**table, "rows": []})
        return diff, diff.changed or row_count(before) != row_count(table)
    diff = diff_tables(before, table)
    return diff, diff.changed


def _walk(trace: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any], TableDict | None]]:
    """Steps with their number and the table before them."""
    out = []
    before: TableDict | None = None
    for number, step in enumerate(trace.get("steps") or [], start=1):
        out.append((number, step, before))
        if step.get("table") is not None:
            before = step["table"]
    return out


def _print_plain(
    trace: Mapping[str, Any], out: TextIO, max_rows: int, answer: Any, error: str | None
) -> None:
    out.write(f"Question: {visible(trace.get('question', ''), lines=True)}\n")
    for number, step, before in _walk(trace):
        kind, name = visible(step.get("kind", "")), visible(step.get("name", ""))
        line = f"\n[{number}] {kind} {name}"
        args = _args_text(step.get("arguments") or {})
        out.write(f"{line}  {args}  ({_usage_text(step)})\n" if args else f"{line}\n")
        for key in ("note", "error"):
            if step.get(key):
                out.write(f"    {key}: {visible(step[key], lines=True)}\n")
        table = step.get("table")
        if table is None:
            continue
        if not _diff(before, table)[1]:
            out.write("    (table unchanged)\n")
            continue
        out.write(_plain_table(table, max_rows) + "\n")
    if error:
        out.write(f"\nFailed: {visible(error, lines=True)}\n")
    out.write(f"\nAnswer: {_answer_text(answer)}\n")


def _plain_table(table: TableDict, max_rows: int) -> str:
    header = [visible(c) for c in table.get("header") or []]
    total = row_count(table)
    shown = [[visible(c) for c in r] for r in (table.get("rows") or [])[:max_rows]]
    widths = [
        min(30, max([len(h)] + [len(r[i]) if i < len(r) else 0 for r in shown]))
        for i, h in enumerate(header)
    ]

    def line(cells: list[str]) -> str:
        return " | ".join(
            (cells[i] if i < len(cells) else "")[:30].ljust(w) for i, w in enumerate(widths)
        )

    lines = []
    if table.get("caption"):
        lines.append(f"    {visible(table['caption'])}")
    lines.append("    " + line(header))
    lines.append("    " + "-+-".join("-" * w for w in widths))
    lines += ["    " + line(r) for r in shown]
    if total > len(shown):
        lines.append(f"    … {total - len(shown)} more rows")
    return "\n".join(lines)


def _print_rich(
    trace: Mapping[str, Any], out: TextIO, max_rows: int, answer: Any, error: str | None
) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table as RichTable

    is_tty = bool(getattr(out, "isatty", lambda: False)())
    console = Console(file=out, highlight=False, width=None if is_tty else 120)
    console.print(
        f"[bold]Question:[/bold] {escape(visible(trace.get('question', ''), lines=True))}"
    )
    for number, step, before in _walk(trace):
        kind, name = visible(step.get("kind", "")), visible(step.get("name", ""))
        args = _args_text(step.get("arguments") or {})
        if kind == "plan":
            console.print(f"[dim]{number}. plan → {escape(name)}  ({_usage_text(step)})[/dim]")
            continue
        console.rule(f"[bold]{number}. {escape(kind)} · {escape(name)}[/bold]", align="left")
        if args:
            console.print(f"[cyan]{escape(args)}[/cyan]  [dim]{_usage_text(step)}[/dim]")
        if step.get("note"):
            console.print(f"[yellow]{escape(visible(step['note'], lines=True))}[/yellow]")
        if step.get("error"):
            console.print(f"[red]{escape(visible(step['error'], lines=True))}[/red]")
        table = step.get("table")
        if table is None:
            continue
        diff, changed = _diff(before, table)
        if not changed:
            console.print("[dim](table unchanged)[/dim]")
            continue
        added_cols = diff.added_columns if diff else set()
        added_rows = diff.added_rows if diff else set()
        rows = (table.get("rows") or [])[:max_rows]
        total = row_count(table)
        shown = RichTable(
            title=escape(visible(table.get("caption") or "")) or None,
            caption=f"{total} rows × {len(table.get('header') or [])} columns",
            show_lines=False,
        )
        shown.add_column("#", style="dim", justify="right")
        for col in table.get("header") or []:
            style = "bold green" if col in added_cols else None
            shown.add_column(escape(visible(col)), header_style=style or "bold", style=style)
        for pos, row in enumerate(rows):
            style = "green" if pos in added_rows else None
            shown.add_row(str(pos + 1), *(escape(visible(c)) for c in row), style=style)
        console.print(shown)
        if total > len(rows):
            console.print(f"[dim]… {total - len(rows)} more rows[/dim]")
    if error:
        console.print(f"[red bold]Failed:[/red bold] {escape(visible(error, lines=True))}")
    console.print(f"[bold]Answer:[/bold] [bold green]{escape(_answer_text(answer))}[/bold green]")
