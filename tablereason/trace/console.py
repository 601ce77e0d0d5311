"""Terminal rendering of traces: each step, each intermediate table, and the answer.

Uses ``rich`` when it is installed (coloured tables, added columns and rows in
green); otherwise prints plain text tables. Works on the JSON form of a trace. Every
text that came from a table or a model (cells, names, arguments, replies, errors) is
shown through :func:`tablereason.trace.terminal.visible`, so control characters in it are
printed as escapes instead of acting on the terminal. A table that the trace kept as
a window of its first rows is captioned with its full row count; a table too wide for
the terminal shows the columns that fit at a readable width (added ones first) and
says how many are hidden (:mod:`tablereason.trace.table_fit`). Given the answer's
evidence, its cells are marked in every table (on a yellow ground with rich, between
``*`` in plain text) and listed after the answer as ``Evidence:`` lines, with the
warnings (:mod:`tablereason.trace.answer_view`).

:class:`TraceView` renders the parts one at a time (the question, one step, the
outcome), which is what the live view of a running question
(:mod:`tablereason.trace.live`) prints as steps complete; :func:`print_trace` prints a
whole trace with it.

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

from tablereason.trace.answer_view import checked_lines, marked
from tablereason.trace.html import row_count
from tablereason.trace.runs_view import run_lines
from tablereason.trace.table_diff import TableDict, TableDiff, diff_tables
from tablereason.trace.table_fit import HIDDEN_HINT, fit_columns, hidden_note
from tablereason.trace.terminal import visible

PIPED_WIDTH = 120
"""Width of rich output that does not go to a terminal."""


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


def usage_text(step: Mapping[str, Any]) -> str:
    """Tokens and time of a step (its JSON form), as the terminal shows them.

    Example:
        >>> usage_text({"usage": {"prompt_tokens": 90, "completion_tokens": 10},
        ...             "duration_s": 0.25})
        '100 tokens, 250 ms'
    """
    usage = step.get("usage") or {}
    tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    ms = 1000 * float(step.get("duration_s") or 0)
    return f"{tokens:,} tokens, {ms:.0f} ms" if tokens else f"{ms:.0f} ms"


def use_rich(plain: bool | None) -> bool:
    """Whether to render with rich: unless ``plain``, when rich is installed."""
    if plain:
        return False
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


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


class TraceView:
    """Prints the parts of a trace (its JSON form) to a stream, rich or plain.

    Args:
        file: Output stream; standard output by default.
        max_rows: Rows shown per table.
        plain: Force plain text (``True``) or rich (``False``); by default rich when
            installed.
        hidden_hint: What to do to see the columns a wide table hides (a sentence).
        prompts: Also print the exact text of every prompt a step sent.
    """

    def __init__(
        self,
        file: TextIO | None = None,
        *,
        max_rows: int = 20,
        plain: bool | None = None,
        hidden_hint: str = HIDDEN_HINT,
        prompts: bool = False,
    ) -> None:
        self.out = file or sys.stdout
        self.max_rows = max_rows
        self.prompts = prompts
        self.hidden_hint = hidden_hint
        self.rich = use_rich(plain)
        self.console: Any = None
        if self.rich:
            from rich.console import Console

            tty = bool(getattr(self.out, "isatty", lambda: False)())
            self.console = Console(
                file=self.out, highlight=False, width=None if tty else PIPED_WIDTH
            )

    def question(self, text: str) -> None:
        """The question line."""
        if self.rich:
            from rich.markup import escape

            self.console.print(f"[bold]Question:[/bold] {escape(visible(text, lines=True))}")
        else:
            self.out.write(f"Question: {visible(text, lines=True)}\n")
        self.out.flush()

    def step(
        self,
        number: int,
        step: Mapping[str, Any],
        before: TableDict | None,
        evidence: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
    ) -> None:
        """One step, with the table after it when it changed (``before``: the last table).

        ``evidence`` holds the ``(row, column)`` cells of its table to mark.
        """
        if self.rich:
            self._rich_step(number, step, before, evidence)
        else:
            self._plain_step(number, step, before, evidence)
        if self.prompts:
            self._prompts(step)
        self.out.flush()

    def _prompts(self, step: Mapping[str, Any]) -> None:
        """Every prompt the step sent, as sent (control characters shown, not obeyed)."""
        prompts = step.get("prompts") or []
        for index, text in enumerate(prompts, start=1):
            self.out.write(f"    --- prompt {index} of {len(prompts)} ---\n")
            self.out.write(visible(str(text), lines=True) + "\n")
        if prompts:
            self.out.write("    --- end of prompts ---\n")

    def note(self, text: str) -> None:
        """One line of text (a run's heading, a run's summary), shown as it is."""
        if self.rich:
            from rich.markup import escape

            self.console.print(f"[bold]{escape(visible(text))}[/bold]", soft_wrap=True)
        else:
            self.out.write(visible(text) + "\n")
        self.out.flush()

    def outcome(
        self,
        answer: Any,
        error: str | None,
        evidence: Mapping[str, Any] | None = None,
        warnings: list[Mapping[str, Any]] | None = None,
    ) -> None:
        """The failure (when there is one), the answer, its evidence and its warnings."""
        self._answer(answer, error)
        lines = checked_lines(answer, error, evidence, warnings)
        if self.rich:
            from rich.markup import escape

            for line in lines:
                style = "yellow bold" if line.startswith("Warning") else "dim"
                self.console.print(f"[{style}]{escape(line)}[/{style}]", soft_wrap=True)
        else:
            self.out.write("".join(f"{line}\n" for line in lines))
        self.out.flush()

    def _answer(self, answer: Any, error: str | None) -> None:
        if self.rich:
            from rich.markup import escape

            if error:  # not wrapped here: a terminal wraps it, a file keeps it whole
                self.console.print(
                    f"[red bold]Failed:[/red bold] {escape(visible(error, lines=True))}",
                    soft_wrap=True,
                )
            self.console.print(
                f"[bold]Answer:[/bold] [bold green]{escape(_answer_text(answer))}[/bold green]",
                soft_wrap=True,
            )
        else:
            if error:
                self.out.write(f"\nFailed: {visible(error, lines=True)}\n")
            self.out.write(f"\nAnswer: {_answer_text(answer)}\n")

    def _plain_step(
        self,
        number: int,
        step: Mapping[str, Any],
        before: TableDict | None,
        evidence: set[tuple[int, str]] | frozenset[tuple[int, str]],
    ) -> None:
        out = self.out
        kind, name = visible(step.get("kind", "")), visible(step.get("name", ""))
        line = f"\n[{number}] {kind} {name}"
        args = _args_text(step.get("arguments") or {})
        out.write(f"{line}  {args}  ({usage_text(step)})\n" if args else f"{line}\n")
        for key in ("note", "error"):
            if step.get(key):
                out.write(f"    {key}: {visible(step[key], lines=True)}\n")
        table = step.get("table")
        if table is None:
            return
        if not _diff(before, table)[1]:
            out.write("    (table unchanged)\n")
            return
        out.write(_plain_table(table, self.max_rows, evidence) + "\n")

    def _rich_step(
        self,
        number: int,
        step: Mapping[str, Any],
        before: TableDict | None,
        evidence: set[tuple[int, str]] | frozenset[tuple[int, str]],
    ) -> None:
        from rich.markup import escape

        console = self.console
        kind, name = visible(step.get("kind", "")), visible(step.get("name", ""))
        args = _args_text(step.get("arguments") or {})
        if kind == "plan":
            console.print(f"[dim]{number}. plan → {escape(name)}  ({usage_text(step)})[/dim]")
            return
        console.rule(f"[bold]{number}. {escape(kind)} · {escape(name)}[/bold]", align="left")
        if args:
            console.print(f"[cyan]{escape(args)}[/cyan]  [dim]{usage_text(step)}[/dim]")
        if step.get("note"):
            note = escape(visible(step["note"], lines=True))
            console.print(f"[yellow]{note}[/yellow]", soft_wrap=True)
        if step.get("error"):
            error = escape(visible(step["error"], lines=True))
            console.print(f"[red]{error}[/red]", soft_wrap=True)
        table = step.get("table")
        if table is None:
            return
        diff, changed = _diff(before, table)
        if not changed:
            console.print("[dim](table unchanged)[/dim]")
            return
        self._rich_table(table, diff, evidence)

    def _rich_table(
        self,
        table: TableDict,
        diff: TableDiff | None,
        evidence: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
    ) -> None:
        from rich.markup import escape
        from rich.table import Table as RichTable

        console = self.console
        added_cols = diff.added_columns if diff else set()
        added_rows = diff.added_rows if diff else set()
        header = [str(c) for c in table.get("header") or []]
        rows = [list(r) for r in (table.get("rows") or [])[: self.max_rows]]
        total = row_count(table)
        cells = [[visible(c) for c in r] for r in rows]
        number_width = len(str(len(rows))) + 3
        keep = [i for i, c in enumerate(header) if c in added_cols]
        fit = fit_columns(
            [visible(c) for c in header], cells, console.width - number_width - 1, keep=keep
        )
        shown = RichTable(
            title=escape(visible(table.get("caption") or "")) or None,
            caption=f"{total} rows × {len(header)} columns",
            show_lines=False,
        )
        shown.add_column("#", style="dim", justify="right")
        for index, width in zip(fit.shown, fit.widths, strict=True):
            col = header[index]
            style = "bold green" if col in added_cols else None
            shown.add_column(
                escape(visible(col)),
                header_style=style or "bold",
                style=style,
                width=width,
                overflow="fold",
            )
        for pos, row in enumerate(cells):
            style = "green" if pos in added_rows else None
            values = [
                _marked(escape(row[i]), (pos, header[i]) in evidence) if i < len(row) else ""
                for i in fit.shown
            ]
            shown.add_row(str(pos + 1), *values, style=style)
        console.print(shown)
        if fit.hidden:
            note = hidden_note([visible(header[i]) for i in fit.hidden], self.hidden_hint)
            console.print(f"[dim]{escape(note)}[/dim]", soft_wrap=True)
        if total > len(rows):
            console.print(f"[dim]… {total - len(rows)} more rows[/dim]")


def _marked(text: str, evidence: bool) -> str:
    return f"[black on yellow]{text}[/black on yellow]" if evidence and text else text


def _plain_table(
    table: TableDict,
    max_rows: int,
    evidence: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> str:
    names = [str(c) for c in table.get("header") or []]
    header = [visible(c) for c in names]
    total = row_count(table)
    shown = [
        [
            f"*{visible(c)}*" if j < len(names) and (i, names[j]) in evidence else visible(c)
            for j, c in enumerate(r)
        ]
        for i, r in enumerate((table.get("rows") or [])[:max_rows])
    ]
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


def walk(trace: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any], TableDict | None]]:
    """Steps of a trace's JSON form with their number and the table before them.

    Example:
        >>> [(n, before) for n, _, before in walk({"steps": [{"table": {"header": ["a"]}},
        ...                                                  {"table": None}]})]
        [(1, None), (2, {'header': ['a']})]
    """
    out = []
    before: TableDict | None = None
    for number, step in enumerate(trace.get("steps") or [], start=1):
        out.append((number, step, before))
        if step.get("table") is not None:
            before = step["table"]
    return out


def print_trace(
    trace: Mapping[str, Any],
    *,
    file: TextIO | None = None,
    max_rows: int = 20,
    answer: Any = None,
    error: str | None = None,
    plain: bool | None = None,
    hidden_hint: str = HIDDEN_HINT,
    evidence: Mapping[str, Any] | None = None,
    warnings: list[Mapping[str, Any]] | None = None,
    prompts: bool = False,
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
        hidden_hint: What to do to see the columns a wide table hides.
        evidence: The answer's evidence (JSON form): marked in the tables, listed last.
        warnings: The answer's warnings (JSON form), printed last.
        prompts: Also print the exact text of every prompt.
    """
    view = TraceView(file, max_rows=max_rows, plain=plain, hidden_hint=hidden_hint, prompts=prompts)
    view.question(str(trace.get("question", "")))
    for number, step, before in walk(trace):
        view.step(number, step, before, marked(evidence, number - 1))
    for label, run in enumerate(trace.get("runs") or [], start=1):
        view.note(f"── run {label}: {run.get('method', '')}")
        for number, step, before in walk(run):
            view.step(number, step, before)
    for line in run_lines(trace):
        view.note(line)
    view.outcome(answer, error, evidence, warnings)
