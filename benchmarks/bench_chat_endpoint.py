"""Chain-of-Table through llama.cpp's OpenAI-compatible server: empty chat replies per endpoint.

Starts ``python -m llama_cpp.server`` on 127.0.0.1 with the embedded model's GGUF file
(Gemma 3 270M) unless ``--base-url`` names a running server, then runs Chain-of-Table
(efficient profile by default) on TabFact and WikiTQ test questions through the chat
endpoint, the completion endpoint or both, and counts the runs that ended with an
error, those that ended with "returned empty chat completions", and the requests.

    flock /tmp/tablereason-model.lock .venv/bin/python benchmarks/bench_chat_endpoint.py \\
        --tabfact 12 --wikitq 12 --endpoints chat,completion --out after.jsonl

As with ``bench_baselines.py``, the code before a change is measured by putting an export
of that commit first on the path (``PYTHONPATH=/tmp/before``); the script uses only
``OpenAIChat`` / ``OpenAICompletion`` and ``ChainOfTable``, which both versions have.
Examples: the fixed-seed samples of ``bench_chain_of_table.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_chain_of_table import DATA, correct, tabfact_sample, wikitq_sample, wikitq_scorer

EMPTY = "returned empty chat completions"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(threads: int, n_ctx: int) -> tuple[subprocess.Popen[bytes], str]:
    """Start llama.cpp's server with the embedded model; wait until it answers."""
    from tablereason.llm.backends.model_files import default_model_path

    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--n_threads", str(threads), "--n_threads_batch", str(threads),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return process, url
        except OSError:
            if process.poll() is not None:
                raise SystemExit(f"llama_cpp.server exited with {process.returncode}") from None
            time.sleep(0.5)
    process.terminate()
    raise SystemExit("llama_cpp.server did not answer within 120 s")


def run_one(
    llm: Any, endpoint: str, profile: str, example: dict[str, Any], scorer: Any
) -> dict[str, Any]:
    """One question: answer, error, requests, time."""
    from tablereason.methods import ChainOfTable

    started = time.perf_counter()
    prediction = ChainOfTable(llm, task=example["task"], profile=profile).run(
        example["table"], example["question"]
    )
    result = {
        "id": example["id"], "task": example["task"], "endpoint": endpoint, "profile": profile,
        "answer": prediction.answer, "error": prediction.error,
        "requests": prediction.trace.usage.requests,
        "seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    result["correct"] = correct(result, example, scorer)
    return result


def summarise(records: list[dict[str, Any]]) -> str:
    """One line per endpoint (and profile)."""
    lines = []
    keys = sorted({(r["endpoint"], r["profile"]) for r in records})
    for endpoint, profile in keys:
        rows = [r for r in records if (r["endpoint"], r["profile"]) == (endpoint, profile)]
        errors = [r for r in rows if r["error"]]
        empty = [r for r in errors if EMPTY in str(r["error"])]
        right = sum(r["correct"] for r in rows)
        requests = sum(r["requests"] for r in rows)
        lines.append(
            f"{endpoint:<10} {profile:<9} {len(rows)} questions: {len(errors)} run errors "
            f"({len(empty)} empty chat replies), {right} right, {requests} requests, "
            f"{sum(r['seconds'] for r in rows):.0f} s"
        )
    return "\n".join(lines)


def read_records(path: Path) -> list[dict[str, Any]]:
    """Records of a result file; a later record of the same question replaces an earlier one."""
    kept: dict[tuple[str, str, str], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            kept[(r["endpoint"], r["profile"], r["id"])] = r
    return list(kept.values())


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, or summarise result files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabfact", type=int, default=12)
    parser.add_argument("--wikitq", type=int, default=12)
    parser.add_argument("--endpoints", default="chat", help="chat, completion or chat,completion")
    parser.add_argument("--profile", default="efficient")
    parser.add_argument("--base-url", help="a running server (default: start llama_cpp.server)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, help="JSON-lines result file (appended; resumes)")
    parser.add_argument("--summarise", nargs="+", type=Path, help="only summarise these files")
    args = parser.parse_args(argv)
    if args.summarise:
        for path in args.summarise:
            print(f"== {path}\n{summarise(read_records(path))}")
        return 0
    from tablereason.llm import OpenAIChat, OpenAICompletion, stack

    examples = tabfact_sample(DATA, args.tabfact) + wikitq_sample(DATA, args.wikitq)
    scorer = wikitq_scorer(DATA)
    done = set()
    if args.out and args.out.exists():
        done = {(r["endpoint"], r["profile"], r["id"]) for r in read_records(args.out)}
    process, url = (None, args.base_url) if args.base_url else start_server(args.threads, 8192)
    try:
        for endpoint in args.endpoints.split(","):
            backend = OpenAIChat if endpoint == "chat" else OpenAICompletion
            llm = stack(backend(model="gemma-3-270m", base_url=url, api_key="unused"))
            for example in examples:
                if (endpoint, args.profile, example["id"]) in done:
                    continue
                record = run_one(llm, endpoint, args.profile, example, scorer)
                error = str(record["error"])[:90]
                print(f"{endpoint} {example['id']} {record['seconds']}s error={error!r}",
                      file=sys.stderr, flush=True)  # fmt: skip
                if args.out:
                    with args.out.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
    print(summarise(read_records(args.out)) if args.out else "")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_PROXY", "127.0.0.1")
    sys.exit(main())
