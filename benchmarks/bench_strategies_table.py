"""The table of the composed methods' real-model runs, and the check that a replay is exact.

    .venv/bin/python benchmarks/bench_strategies_table.py /tmp/strategies
    .venv/bin/python benchmarks/bench_strategies_table.py /tmp/strategies --replay self_consistency

Reads ``<root>/<dataset>/<method>/results.jsonl`` (written by bench_strategies_model.sh)
and prints, per dataset and method, over the questions that method answered: the
accuracy with its 95% interval (Wilson's), requests, tokens and seconds per question,
and their ratios to the single chain's on the same questions; it checks that each
record's requests and tokens are the exact sums of its steps' and sub-runs'.
``--paths``: per path kind of the voting runs (Mix-SC's textual and symbolic paths,
self-consistency's samples): how many answered, requests, completion tokens per request
and seconds per path, which shows where a composed run's time goes.
``--replay NAME``: copies that run's response cache into a new folder and runs the same
eval offline (the model is never called): every answer, sub-run answer and usage must
be the recorded one.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tablereason.evaluate.report.accuracy import wilson
from tablereason.evaluate.results import read_results

METHODS = ("single", "self_consistency", "mix_sc", "table_critic")
ARGUMENTS = {  # as bench_strategies_model.sh runs each
    "single": ["--method", "chain_of_table"],
    "self_consistency": ["--method", "self_consistency", "--option", "k=5",
                         "--option", "temperature=0.7", "--option", "workers=1"],
    "mix_sc": ["--method", "mix_sc", "--option", "k=5", "--option", "temperature=0.7",
               "--option", "workers=1"],
    "table_critic": ["--method", "table_critic", "--option", "rounds=2"],
}  # fmt: skip


def _usage_sum(trace: dict[str, Any]) -> tuple[int, int]:
    """Requests and tokens of a trace's own steps plus its sub-runs', from the record."""
    requests = sum(int(s["usage"].get("requests", 0)) for s in trace.get("steps") or [])
    tokens = sum(
        int(s["usage"].get("prompt_tokens", 0)) + int(s["usage"].get("completion_tokens", 0))
        for s in trace.get("steps") or []
    )
    for run in trace.get("runs") or []:
        more = _usage_sum(run)
        requests, tokens = requests + more[0], tokens + more[1]
    return requests, tokens


def arguments(name: str, dataset: str) -> list[str]:
    """The eval arguments of one method's run (Mix-SC's symbolic paths differ by dataset)."""
    if name != "mix_sc":
        return ARGUMENTS[name]
    symbolic = "text_to_sql" if dataset == "wikitq" else "program_of_thought"
    return [*ARGUMENTS[name], "--option", f"symbolic={symbolic}"]


def _ids(folder: Path) -> set[str]:
    return {r["id"] for r in read_results(folder / "results.jsonl")[1]}


def summary(folder: Path, ids: set[str] | None = None) -> dict[str, Any]:
    """One run's figures per question (of ``ids`` only, when given), and its accounting."""
    _, records, _ = read_results(folder / "results.jsonl")
    records = [r for r in records if ids is None or r["id"] in ids]
    n = len(records)
    correct = sum(float(r.get("score") or 0) for r in records)
    exact = all(
        _usage_sum(r["trace"])
        == (int(r["requests"]), int(r["prompt_tokens"]) + int(r["completion_tokens"]))
        for r in records
    )
    low, high = wilson(correct, n)
    return {
        "n": n, "correct": correct, "accuracy": correct / n if n else 0.0,
        "interval": (low, high),
        "requests": sum(int(r["requests"]) for r in records) / max(n, 1),
        "tokens": sum(int(r["prompt_tokens"]) + int(r["completion_tokens"]) for r in records)
        / max(n, 1),
        "seconds": sum(float(r["duration_s"]) for r in records) / max(n, 1),
        "failed": sum(1 for r in records if r.get("error")), "exact_sums": exact,
    }  # fmt: skip


def table(root: Path) -> str:
    """The Markdown table of every dataset and method found under ``root``."""
    lines = [
        "| dataset | method | n | accuracy (95% interval) | requests / q | tokens / q "
        "| seconds / q | requests, tokens, seconds vs single | sums exact |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for dataset in sorted(p.name for p in root.iterdir() if p.is_dir()):
        found = [m for m in METHODS if (root / dataset / m / "results.jsonl").is_file()]
        for method in found:
            # each method over the questions it answered; the single chain over the same
            ids = _ids(root / dataset / method)
            row = summary(root / dataset / method, ids)
            base = summary(root / dataset / "single", ids) if "single" in found else None
            if not row["n"]:
                continue
            low, high = row["interval"]
            ratio = ""
            if base and base["requests"] and base["seconds"]:
                ratio = ", ".join(
                    f"{row[k] / base[k]:.2f}x" for k in ("requests", "tokens", "seconds")
                )
            lines.append(
                f"| {dataset} | {method} | {row['n']} | {100 * row['accuracy']:.0f}% "
                f"({100 * low:.0f}-{100 * high:.0f}%) | {row['requests']:.1f} | "
                f"{row['tokens']:,.0f} | {row['seconds']:.1f} | {ratio} | "
                f"{'yes' if row['exact_sums'] else 'NO'} |"
            )
    return "\n".join(lines)


def _total(trace: dict[str, Any], field: str) -> float:
    """A step field (``duration_s``) or usage field summed over a trace and its sub-runs."""
    own = sum(float(s.get(field) or s["usage"].get(field) or 0) for s in trace.get("steps") or [])
    return own + sum(_total(run, field) for run in trace.get("runs") or [])


def paths(root: Path) -> str:
    """The Markdown table of the voting runs' paths, per dataset, method and path kind."""
    lines = [
        "| dataset | method | path kind | paths | answered | requests / path "
        "| completion tokens / request | seconds / path |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dataset in sorted(p.name for p in root.iterdir() if p.is_dir()):
        for method in ("self_consistency", "mix_sc"):
            file = root / dataset / method / "results.jsonl"
            if not file.is_file():
                continue
            kinds: dict[str, list[float]] = {}  # kind -> paths, answered, requests, tokens, s
            for record in read_results(file)[1]:
                trace = record["trace"]
                vote = next(s for s in trace["steps"] if s["kind"] == "vote")
                runs = trace.get("runs") or []
                labels = vote["arguments"].get("kinds") or ["text"] * len(runs)
                abstained = set(vote["arguments"].get("abstained") or [])
                for number, (kind, run) in enumerate(zip(labels, runs, strict=True), 1):
                    row = kinds.setdefault(kind, [0, 0, 0, 0, 0.0])
                    row[0] += 1
                    row[1] += number not in abstained
                    row[2] += _usage_sum(run)[0]
                    row[3] += _total(run, "completion_tokens")
                    row[4] += _total(run, "duration_s")
            for kind, (count, answered, requests, completion, seconds) in kinds.items():
                lines.append(
                    f"| {dataset} | {method} | {kind} | {count:.0f} | {answered:.0f} | "
                    f"{requests / count:.1f} | {completion / max(requests, 1):.0f} | "
                    f"{seconds / count:.1f} |"
                )
    return "\n".join(lines)


def replay(root: Path, name: str) -> bool:
    """Run ``name``'s evals again offline from a copy of their caches; True when identical."""
    same = True
    for dataset in sorted(p.name for p in root.iterdir() if p.is_dir()):
        folder = root / dataset / name
        if not (folder / "results.jsonl").is_file():
            continue
        _, records, _ = read_results(folder / "results.jsonl")
        with tempfile.TemporaryDirectory() as scratch:
            again = Path(scratch) / name
            again.mkdir()
            for part in [folder / "responses.sqlite", *folder.glob("responses.sqlite-wal")]:
                shutil.copy(part, again / part.name)
            command = [sys.executable, "-m", "tablereason.cli", "eval", "--dataset", dataset,
                       "--split", "test", "--data-dir", "../shared/data", "--model", "local",
                       "--limit", str(len(records)), "--concurrency", "1", "--out", str(again),
                       "--quiet", "--offline", *arguments(name, dataset)]  # fmt: skip
            subprocess.run(command, check=True)
            _, replayed, _ = read_results(again / "results.jsonl")
        key = lambda r: (r["id"], r["answer"], r["requests"], r["prompt_tokens"],  # noqa: E731
                         r["completion_tokens"],
                         [x.get("answer") for x in r["trace"].get("runs") or []])  # fmt: skip
        ok = sorted(map(key, records)) == sorted(map(key, replayed))
        print(f"{dataset}/{name}: {len(records)} questions replayed offline, identical: {ok}")
        same = same and ok
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--replay", help="a method folder to replay offline")
    parser.add_argument("--paths", action="store_true", help="where the voting runs' time goes")
    args = parser.parse_args()
    if args.replay:
        sys.exit(0 if replay(args.root, args.replay) else 1)
    print(paths(args.root) if args.paths else table(args.root))


if __name__ == "__main__":
    main()
