"""ReAct, ReWOO and Chameleon on one's own table with the embedded model: what each did.

Runs ``tablereason ask TABLE QUESTION --method M --model local --json`` for each method
(a smoke run, not an accuracy figure) and writes each run's JSON output to ``--out``.
The summary gives, per method: the exit code, the answer or the error, the steps (tool
calls with their inputs and whether they found something), the model requests, the
largest prompt in the model's own tokens (the embedded model counts them; a step's
tokens over its requests) against its context, and the seconds.

    flock /tmp/tablereason-bench.lock .venv/bin/python benchmarks/table_agent_smoke.py \\
        examples/taymyr_births.csv "which year had the most deaths?" --out logs/
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

METHODS = ("react", "rewoo", "chameleon")
N_CTX = 8192


def run(table: str, question: str, method: str, timeout: int) -> tuple[dict[str, Any], float, int]:
    """One ``ask`` run: its JSON output, its seconds and its exit code."""
    script = Path(sys.executable).parent / "tablereason"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [str(script), "ask", table, question, "--method", method, "--model", "local",
             "--json"],
            capture_output=True, text=True, env=env, timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        seconds = time.perf_counter() - started
        return {"error": f"stopped after {timeout} s", "trace": {"steps": []}}, seconds, 124
    seconds = time.perf_counter() - started
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        payload = {"error": done.stderr[-2000:], "trace": {"steps": []}}
    return payload, seconds, done.returncode


def summary(method: str, payload: dict[str, Any], seconds: float, code: int) -> list[str]:
    """What one run did, as report lines."""
    steps = payload["trace"]["steps"]
    answer = payload.get("answer")
    lines = [f"### {method}", "", f"- exit {code}, {seconds:.0f} s; answer {answer!r}"]
    if payload.get("error"):
        lines.append(f"- error: {payload['error'][:300]}")
    prompt_tokens = [
        s["usage"]["prompt_tokens"] // max(1, s["usage"]["requests"])
        for s in steps
        if s.get("usage") and s["usage"].get("requests")
    ]
    usage = payload["trace"].get("usage") or {}
    lines.append(
        f"- {usage.get('requests', 0)} requests, {usage.get('prompt_tokens', 0)} prompt and "
        f"{usage.get('completion_tokens', 0)} completion tokens; largest prompt (a step's "
        f"mean per request) {max(prompt_tokens, default=0)} tokens of the {N_CTX}-token context"
    )
    for number, step in enumerate(steps, start=1):
        what = f"{step['kind']} {step['name']}"
        args = step.get("arguments") or {}
        detail = args.get("input") or args.get("answer") or args.get("plan") or ""
        found = ""
        if step["kind"] == "tool":
            found = " -> " + (step.get("error") or " ".join((step.get("raw") or [""])[0].split()))
        if step["kind"] in ("step", "plan", "module", "program", "answer", "tool", "error"):
            text = f"{what}: {detail}{found}".replace("\n", " ")
            lines.append(f"  {number}. {text[:240]}")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    parser.add_argument("question")
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--out", type=Path, required=True, help="folder for each run's JSON")
    parser.add_argument("--timeout", type=int, default=600)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    report = [f"Table {args.table}, question {args.question!r}, load {os.getloadavg()[0]:.1f}", ""]
    for method in args.methods:
        payload, seconds, code = run(args.table, args.question, method, args.timeout)
        name = f"{Path(args.table).stem}_{method}.json"
        (args.out / name).write_text(json.dumps(payload, indent=1), encoding="utf-8")
        report += summary(method, payload, seconds, code)
    text = "\n".join(report)
    (args.out / f"{Path(args.table).stem}_summary.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
