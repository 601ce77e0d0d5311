"""The evaluation runner: results file, failures, resume (also after kill -9), shards, merge."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from eval_examples import tabfact_examples as _examples

from tablereason.datasets import Example
from tablereason.errors import ConfigurationError
from tablereason.evaluate.progress import ProgressLine
from tablereason.evaluate.results import ResultFileError, RunConfig, read_results
from tablereason.evaluate.runner import (
    merge_results,
    parse_shard,
    run_evaluation,
    score_results,
)
from tablereason.trace import Prediction

REPO = Path(__file__).resolve().parents[2]


def _even_right(example: Example) -> Prediction:
    # right on even positions, wrong on odd ones
    i = int(example.id[2:])
    return Prediction(answer=example.answer if i % 2 == 0 else "maybe")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_run_writes_config_then_one_record_per_example(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    summary = run_evaluation(
        _even_right, _examples(10), out, metric="tabfact_accuracy", concurrency=4, progress=False
    )
    lines = _lines(out)
    assert lines[0]["type"] == "config"
    assert lines[0]["metric"] == "tabfact_accuracy"
    assert lines[0]["method"] == "_even_right"
    assert sorted(r["id"] for r in lines[1:]) == sorted(e.id for e in _examples(10))
    assert summary.result is not None
    assert (summary.result.score, summary.result.n) == (0.5, 10)
    assert (summary.total, summary.ran, summary.resumed) == (10, 10, 0)
    assert all("trace" in r and r["score"] in (0.0, 1.0) for r in lines[1:])


def test_failures_are_recorded_and_count_as_wrong(tmp_path: Path) -> None:
    def flaky(example: Example) -> Prediction:
        if example.id == "ex2":
            raise RuntimeError("model fell over")
        if example.id == "ex4":
            return None  # type: ignore[return-value]
        return Prediction(answer=example.answer)

    summary = run_evaluation(
        flaky, _examples(6), tmp_path / "r.jsonl", metric="tabfact_accuracy", progress=False
    )
    assert summary.failed == 2
    assert summary.result is not None and summary.result.correct == 4
    records = {r["id"]: r for r in read_results(tmp_path / "r.jsonl")[1]}
    assert records["ex2"]["error"] == "RuntimeError: model fell over"


def test_rerun_skips_done_examples(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    examples = _examples(12)
    run_evaluation(_even_right, examples[:5], out, metric="tabfact_accuracy", progress=False)
    calls: list[str] = []

    def counting(example: Example) -> Prediction:
        calls.append(example.id)
        return _even_right(example)

    counting.__name__ = "_even_right"
    summary = run_evaluation(counting, examples, out, metric="tabfact_accuracy", progress=False)
    assert sorted(calls) == sorted(e.id for e in examples[5:])
    assert (summary.resumed, summary.ran) == (5, 7)
    assert summary.result is not None and summary.result.score == 0.5
    assert len(_lines(out)) == 13


def test_torn_last_line_is_dropped_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    examples = _examples(6)
    run_evaluation(_even_right, examples[:3], out, metric="tabfact_accuracy", progress=False)
    with out.open("ab") as handle:
        handle.write(b'{"type": "result", "id": "ex3", "answ')  # killed mid-write
    _config, records, good = read_results(out)
    assert len(records) == 3 and good < out.stat().st_size
    run_evaluation(_even_right, examples, out, metric="tabfact_accuracy", progress=False)
    ids = [r["id"] for r in _lines(out)[1:]]
    assert sorted(ids) == sorted(e.id for e in examples)


def test_damaged_file_and_other_runs_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    run_evaluation(_even_right, _examples(3), out, metric="tabfact_accuracy", progress=False)
    with pytest.raises(ConfigurationError, match="different run"):
        run_evaluation(
            _even_right,
            _examples(3),
            out,
            metric="tabfact_accuracy",
            config=RunConfig(method="other"),
            progress=False,
        )
    lines = out.read_text().splitlines()
    lines[1] = lines[1][:20]
    out.write_text("\n".join(lines) + "\n")
    with pytest.raises(ResultFileError, match="line 2 is not valid JSON"):
        run_evaluation(_even_right, _examples(3), out, metric="tabfact_accuracy", progress=False)
    (tmp_path / "x.jsonl").write_text('{"type": "result", "id": "a"}\n')
    with pytest.raises(ResultFileError, match="not a run configuration"):
        read_results(tmp_path / "x.jsonl")


class _Prompted:
    """A method whose prompt hashes (at the top and of an inner method) a test can change."""

    name = "prompted"

    def __init__(self, top: str, inner: str) -> None:
        self.hashes = (top, inner)

    def run(self, example: Example) -> Prediction:
        return Prediction(answer=example.answer)

    def config(self) -> dict:
        top, inner = self.hashes
        return {"method": self.name, "prompts": {"judge": top},
                "inner": {"chain": {"prompts": {"plan": inner}}}}  # fmt: skip


def test_a_method_run_without_a_config_refuses_to_resume_after_a_prompt_changed(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.jsonl"
    run_evaluation(_Prompted("a", "b"), _examples(2), out, metric="tabfact_accuracy",
                   progress=False)  # fmt: skip
    assert _lines(out)[0]["prompt_hashes"] == {"judge": "a", "plan": "b"}
    assert _lines(out)[0]["extra"]["method_config"]["inner"]["chain"]["prompts"] == {"plan": "b"}
    summary = run_evaluation(_Prompted("a", "b"), _examples(3), out, metric="tabfact_accuracy",
                             progress=False)  # fmt: skip
    assert (summary.resumed, summary.ran) == (2, 1)
    for changed in (_Prompted("x", "b"), _Prompted("a", "x")):
        with pytest.raises(ConfigurationError, match="different run"):
            run_evaluation(changed, _examples(3), out, metric="tabfact_accuracy", progress=False)
    assert len(_lines(out)) == 4


def test_shards_merge_to_the_unsharded_result(tmp_path: Path) -> None:
    examples = _examples(11)
    paths = []
    for i in range(3):
        path = tmp_path / f"shard{i}.jsonl"
        summary = run_evaluation(
            _even_right, examples, path, metric="tabfact_accuracy", shard=f"{i}/3", progress=False
        )
        assert summary.total == len(examples[i::3])
        paths.append(path)
    merged = merge_results(paths, tmp_path / "all.jsonl")
    ids = [r["id"] for r in _lines(merged)[1:]]
    assert sorted(ids) == sorted(e.id for e in examples)
    whole = run_evaluation(
        _even_right, examples, tmp_path / "whole.jsonl", metric="tabfact_accuracy", progress=False
    )
    assert score_results(merged, examples).score == whole.result.score  # type: ignore[union-attr]
    assert _lines(merged)[0]["shard"] is None


def test_merge_refuses_different_runs(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_evaluation(_even_right, _examples(2), a, metric="tabfact_accuracy", progress=False)
    run_evaluation(lambda e: e.answer, _examples(2), b, metric="tabfact_accuracy", progress=False)
    with pytest.raises(ResultFileError, match="different run"):
        merge_results([a, b], tmp_path / "m.jsonl")


@pytest.mark.parametrize("spec", ["3/3", "-1/2", "a/b", "1"])
def test_bad_shard_specs(spec: str) -> None:
    with pytest.raises(ConfigurationError):
        parse_shard(spec)


def test_duplicate_ids_and_bad_concurrency_are_refused(tmp_path: Path) -> None:
    examples = _examples(2) + _examples(1)
    with pytest.raises(ConfigurationError, match="unique"):
        run_evaluation(_even_right, examples, tmp_path / "r.jsonl", progress=False)
    with pytest.raises(ConfigurationError, match="concurrency"):
        run_evaluation(_even_right, _examples(1), tmp_path / "r.jsonl", concurrency=0)


def test_concurrency_runs_examples_in_parallel(tmp_path: Path) -> None:
    active, peak = 0, 0
    lock = threading.Lock()

    def slow(example: Example) -> Prediction:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.05)
        with lock:
            active -= 1
        return Prediction(answer=example.answer)

    run_evaluation(slow, _examples(16), tmp_path / "r.jsonl", concurrency=8, progress=False)
    assert peak > 1


def test_progress_line() -> None:
    stream = io.StringIO()
    bar = ProgressLine(4, stream=stream, min_interval_s=0)
    for score in (1.0, 0.0, 1.0, 1.0):
        bar.update(score=score, tokens=100)
    text = bar.render()
    assert "[4/4]" in text and "75.0%" in text and "tokens 400" in text
    last = stream.getvalue().strip().splitlines()[-1]
    assert last.startswith("[4/4] acc  75.0% | failed 0 | tokens 400 |")
    assert last.endswith("ETA 0m00s")


SCRIPT = textwrap.dedent(
    """
    import sys, time
    from tablereason.datasets import Example
    from tablereason.evaluate.runner import run_evaluation
    from tablereason.trace import Prediction

    def slow(example):
        time.sleep(0.02)
        return Prediction(answer=example.answer)

    examples = [Example(dataset="tabfact", id=f"ex{i}", question="s", answer="yes",
                        metadata={"label": 1}) for i in range(400)]
    run_evaluation(slow, examples, sys.argv[1], metric="tabfact_accuracy", concurrency=4,
                   progress=False)
    """
)


def test_resume_after_kill_9(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(script), str(out)], env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if out.exists() and out.read_bytes().count(b"\n") >= 41:  # config + 40 results
                break
            if proc.poll() is not None:
                pytest.fail("the run finished before it could be killed")
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = read_results(out)[1]
    assert 40 <= len(before) < 400
    calls: list[str] = []

    def fast(example: Example) -> Prediction:
        calls.append(example.id)
        return Prediction(answer=example.answer)

    fast.__name__ = "slow"
    examples = [
        Example(dataset="tabfact", id=f"ex{i}", question="s", answer="yes", metadata={"label": 1})
        for i in range(400)
    ]
    summary = run_evaluation(
        fast, examples, out, metric="tabfact_accuracy", concurrency=4, progress=False
    )
    ids = [r["id"] for r in read_results(out)[1]]
    assert len(ids) == len(set(ids)) == 400, "no example lost or counted twice"
    assert len(calls) == 400 - len(before), "finished examples are not run again"
    assert not set(calls) & {r["id"] for r in before}
    assert summary.result is not None and summary.result.score == 1.0
