"""Batched fsync (the `tablereason eval` default) still loses nothing when killed with -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tablereason.datasets import Example
from tablereason.evaluate.results import read_results
from tablereason.evaluate.runner import run_evaluation
from tablereason.trace import Prediction

REPO = Path(__file__).resolve().parents[2]
N = 300

SCRIPT = textwrap.dedent(
    f"""
    import sys, time
    from tablereason.datasets import Example
    from tablereason.evaluate.runner import run_evaluation
    from tablereason.trace import Prediction

    def slow(example):
        time.sleep(0.01)
        return Prediction(answer=example.answer)

    examples = [Example(dataset="tabfact", id=f"ex{{i}}", question="s", answer="yes",
                        metadata={{"label": 1}}) for i in range({N})]
    # one fsync a minute at most: everything after the first line relies on the OS
    run_evaluation(slow, examples, sys.argv[1], metric="tabfact_accuracy", concurrency=2,
                   progress=False, sync_interval_s=60)
    """
)


def test_kill_9_with_batched_fsync_loses_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(script), str(out)], env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if out.exists() and out.read_bytes().count(b"\n") >= 31:
                break
            if proc.poll() is not None:
                pytest.fail("the run finished before it could be killed")
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = read_results(out)[1]
    assert 30 <= len(before) < N
    calls: list[str] = []

    def fast(example: Example) -> Prediction:
        calls.append(example.id)
        return Prediction(answer=example.answer)

    fast.__name__ = "slow"
    examples = [
        Example(dataset="tabfact", id=f"ex{i}", question="s", answer="yes", metadata={"label": 1})
        for i in range(N)
    ]
    summary = run_evaluation(
        fast, examples, out, metric="tabfact_accuracy", progress=False, sync_interval_s=60
    )
    ids = [r["id"] for r in read_results(out)[1]]
    assert len(ids) == len(set(ids)) == N, "no example lost or counted twice"
    assert len(calls) == N - len(before), "finished examples are not run again"
    assert summary.result is not None and summary.result.score == 1.0
