"""`eval` housekeeping: a vanished server, Ctrl-C, refused runs, and resumed examples' times."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.scripted_server import ScriptedServer, wikitq_reply

from tablereason.cli import EXIT_INTERRUPTED, EXIT_MODEL, EXIT_OK, EXIT_USAGE, main
from tablereason.errors import ConfigurationError, UnknownNameError
from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
from tablereason.evaluate.results import read_results

SCRIPT = Path(sys.executable).parent / "tablereason"


def _eval(out: Path, data: Path, *extra: str) -> list[str]:
    return ["eval", "--dataset", "wikitq", "--data-dir", str(data), "--out", str(out),
            "--quiet", *extra]  # fmt: skip


def _free_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def test_eval_stops_with_exit_4_when_the_server_is_gone_and_keeps_its_results(
    fixture_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with ScriptedServer(wikitq_reply) as server:
        url = server.url
        model = ["--base-url", url, "--model", "fake-model"]
        assert main(_eval(out, fixture_data, "--limit", "3", *model)) == EXIT_OK
    capsys.readouterr()
    # the same run, continued, once the server has gone: two examples in a row fail
    argv = _eval(out, fixture_data, "--limit", "12", "--concurrency", "1", *model,
                 "--max-connection-failures", "2")  # fmt: skip
    started = time.monotonic()
    assert main(argv) == EXIT_MODEL
    assert time.monotonic() - started < 30
    err = capsys.readouterr().err
    assert f"the server at {url} is unreachable" in err
    assert "stopped after 2 examples in a row" in err and f"kept in {out}" in err
    _, records, _ = read_results(out / "results.jsonl")
    assert len(records) == 3 and not any(r["error"] for r in records)  # nothing lost or added
    # with the limit off, every example runs; the unreachable ones are reported, not recorded
    off = _eval(out, fixture_data, "--limit", "5", *model, "--max-connection-failures", "0")
    assert main(off) == EXIT_OK
    printed = capsys.readouterr().out
    assert "2 examples could not reach the model server and were not recorded" in printed
    assert len(read_results(out / "results.jsonl")[1]) == 3


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--method", "chain_of_tabel"], "did you mean 'chain_of_table'"),
        (["--option", "nosuch=1"], "has no option 'nosuch'"),
        (["--option", "select_samples=0"], "select_samples=0 is not valid"),
        (["--profile", "fastest"], "no profile 'fastest'"),
        # refused when the method is built (react and chameleon take wikitq questions now)
        (["--method", "chameleon", "--option", 'plan=["answer_generator"]'], "breaks rule"),
    ],
)
def test_a_refused_eval_leaves_no_run_folder(
    fixture_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra, says
) -> None:
    out = tmp_path / "run"
    argv = _eval(out, fixture_data, "--limit", "2", "--base-url", _free_url(), "--model", "m")
    assert main([*argv, *extra]) == EXIT_USAGE
    assert says in capsys.readouterr().err
    assert not out.exists()


def test_run_benchmark_refused_by_the_method_removes_only_the_folder_it_made(
    fixture_data: Path, tmp_path: Path
) -> None:
    fresh = tmp_path / "fresh"
    spec = BenchmarkSpec(dataset="wikitq", out=str(fresh), data_dir=str(fixture_data), limit=2,
                         base_url=_free_url(), model="m", options={"nosuch": 1})  # fmt: skip
    with pytest.raises(ConfigurationError):
        run_benchmark(spec, progress=False)
    assert not fresh.exists()  # the cache had made it; nothing of the run is left
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UnknownNameError):
        run_benchmark(spec.model_copy(update={"out": str(kept), "method": "nope"}), progress=False)
    assert sorted(p.name for p in kept.iterdir()) == ["notes.txt"]


def _child(out: Path, data: Path, url: str, limit: int) -> subprocess.Popen[str]:
    env = {**os.environ, "OPENAI_API_KEY": "unused"}
    argv = [str(SCRIPT), *_eval(out, data, "--limit", str(limit), "--concurrency", "2",
                                "--base-url", url, "--model", "fake-model")]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)  # fmt: skip


def _wait_for(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_ctrl_c_lets_running_examples_finish_and_says_so(
    fixture_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with ScriptedServer(wikitq_reply, latency=0.8) as server:
        child = _child(out, fixture_data, server.url, limit=6)
        _wait_for(lambda: server.counts.received >= 2)  # two examples are running
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    assert child.returncode == EXIT_INTERRUPTED, err
    said = re.search(r"interrupted: (\d+) examples? (?:are|is) finishing", err)
    assert said and "press Ctrl-C again to stop at once" in err, err
    finishing = int(said.group(1))
    assert finishing >= 1
    _, records, _ = read_results(out / "results.jsonl")
    assert finishing <= len(records) < 6  # the finishing ones were written; the rest not run
    assert "rerun the same command to continue" in err


def test_a_second_ctrl_c_stops_at_once(fixture_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with ScriptedServer(wikitq_reply, latency=4.0) as server:
        child = _child(out, fixture_data, server.url, limit=4)
        _wait_for(lambda: server.counts.received >= 2)
        child.send_signal(signal.SIGINT)
        assert child.stderr is not None
        _wait_for(lambda: "finishing" in child.stderr.readline())
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        child.wait(timeout=30)
        took = time.monotonic() - started
        err = child.stderr.read()
    assert child.returncode == EXIT_INTERRUPTED
    assert took < 3.0, f"{took:.1f} s: the second Ctrl-C waited for the running examples"
    assert "stopped at once; 2 running example(s) abandoned" in err
    read_results(out / "results.jsonl")  # intact


def test_replayed_examples_keep_the_time_they_took(
    fixture_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with ScriptedServer(wikitq_reply, latency=0.3) as server:
        argv = _eval(out, fixture_data, "--limit", "4", "--concurrency", "2",
                     "--base-url", server.url, "--model", "fake-model")  # fmt: skip
        assert main(argv) == EXIT_OK
        first = {r["id"]: r for r in read_results(out / "results.jsonl")[1]}
        calls = server.counts.received
        (out / "results.jsonl").unlink()  # every answer is now replayed from the cache
        assert main(argv) == EXIT_OK
        assert server.counts.received == calls  # no request reached the server
    again = {r["id"]: r for r in read_results(out / "results.jsonl")[1]}
    for key, record in again.items():
        original = first[key]["duration_s"]
        assert original >= 0.3 * first[key]["requests"]
        assert record["duration_s"] == pytest.approx(original, rel=0.25)
        assert record["replayed"]["answers"] == first[key]["requests"]
        assert record["replayed"]["wall_s"] < 0.3  # what the replay itself took
    capsys.readouterr()
    assert main(["report", str(out)]) == EXIT_OK
