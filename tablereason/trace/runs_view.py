"""The sub-runs of a composed trace as terminals and pages show them: samples, answers, vote.

A composed method (self-consistency, Mix-SC, a critic) keeps each inner run in its
trace's ``runs`` (the JSON form's ``"runs"``); :func:`run_lines` gives one line per run
(its label, its answer or error, its requests and tokens) and the vote's line, which the
console prints before the answer; :func:`runs_html` is the page's section: the same
summary as a table, then each run's steps, folded.

Example:
    >>> trace = {"runs": [{"method": "cot #1", "answer": ["3"], "steps": [],
    ...                    "usage": {"requests": 2, "prompt_tokens": 10, "completion_tokens": 2}},
    ...                   {"method": "cot #2", "error": "timed out", "steps": [], "usage": {}}],
    ...          "steps": [{"kind": "vote", "name": "most votes",
    ...                     "arguments": {"winner": ["3"], "candidates": [{"votes": 1}]}}]}
    >>> for line in run_lines(trace): print(line)
    Run 1 of 2: cot #1 · answer 3 · 2 requests, 12 tokens
    Run 2 of 2: cot #2 · failed: timed out · 0 requests, 0 tokens
    Vote: 3 (1 of 2 votes; most votes)
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any

from tablereason.trace.terminal import visible


def _answer_text(answer: Any) -> str:
    if isinstance(answer, list):
        return " | ".join(str(a) for a in answer)
    return "" if answer is None else str(answer)


def _cost(run: Mapping[str, Any]) -> str:
    usage = run.get("usage") or {}
    tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    return f"{int(usage.get('requests', 0))} requests, {tokens:,} tokens"


def _outcome(run: Mapping[str, Any]) -> str:
    if run.get("error"):
        return f"failed: {run['error']}"
    return f"answer {_answer_text(run.get('answer'))}"


def vote_line(trace: Mapping[str, Any]) -> str | None:
    """The vote of a composed trace in one line; ``None`` when it has no vote step."""
    vote = next((s for s in trace.get("steps") or [] if s.get("kind") == "vote"), None)
    if vote is None:
        return None
    arguments = vote.get("arguments") or {}
    votes = [int(c.get("votes", 0)) for c in arguments.get("candidates") or []]
    top = max(votes) if votes else 0
    winner = arguments.get("winner")
    shown = "no answer" if winner is None else _answer_text(winner)
    total = len(trace.get("runs") or [])
    return f"Vote: {shown} ({top} of {total} votes; {vote.get('name', '')})"


def run_lines(trace: Mapping[str, Any]) -> list[str]:
    """One line per sub-run, then the vote's (none for a trace without sub-runs)."""
    runs = [r for r in trace.get("runs") or [] if isinstance(r, Mapping)]
    lines = [
        visible(f"Run {n} of {len(runs)}: {run.get('method', '')} · {_outcome(run)} · {_cost(run)}")
        for n, run in enumerate(runs, start=1)
    ]
    line = vote_line(trace) if runs else None
    if line is not None:
        lines.append(visible(line))
    return lines


def runs_html(trace: Mapping[str, Any], body: Callable[[Mapping[str, Any]], str]) -> str:
    """The page's section of the sub-runs: a summary table, then each run folded.

    Args:
        trace: The composed trace's JSON form.
        body: Renders one run's steps (the page's own step renderer).
    """
    runs = [r for r in trace.get("runs") or [] if isinstance(r, Mapping)]
    if not runs:
        return ""
    rows = "".join(
        f"<tr><td>{n}</td><td><code>{html.escape(str(run.get('method', '')))}</code></td>"
        f"<td>{html.escape(_outcome(run))}</td><td>{html.escape(_cost(run))}</td></tr>"
        for n, run in enumerate(runs, start=1)
    )
    parts = [
        "<section class='runs'><h2>Runs</h2><table><tr><th>#</th><th>run</th>"
        f"<th>outcome</th><th>cost</th></tr>{rows}</table>"
    ]
    line = vote_line(trace)
    if line:
        parts.append(f"<p class='vote'><b>{html.escape(line)}</b></p>")
    for n, run in enumerate(runs, start=1):
        summary = html.escape(f"Run {n}: {run.get('method', '')} · {_outcome(run)}")
        parts.append(f"<details><summary>{summary}</summary>{body(run)}</details>")
    parts.append("</section>")
    return "".join(parts)
