"""The runner's loop: stopping (Ctrl-C or a stop event), a vanished server, replayed times."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tablereason.datasets import Example
from tablereason.evaluate.replay_clock import ReplayClock, timing
from tablereason.evaluate.results import read_results
from tablereason.evaluate.run_loop import Interrupted
from tablereason.evaluate.runner import run_evaluation
from tablereason.evaluate.server_watch import ServerUnreachableError, ServerWatch
from tablereason.llm import Request, ScriptedLLM
from tablereason.llm.wrappers.cache import CachedLLM
from tablereason.trace import Prediction


def _examples(n: int) -> list[Example]:
    return [Example(dataset="d", id=f"e{i}", question="q", answer="a") for i in range(n)]


def test_a_stop_event_lets_the_running_examples_finish_and_keeps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stop = threading.Event()
    started: list[str] = []
    lock = threading.Lock()

    def answer(example: Example) -> str:
        with lock:
            started.append(example.id)
            if len(started) == 2:
                stop.set()  # as a parent's Ctrl-C would, while two examples run
        time.sleep(0.3)
        return "a"

    out = tmp_path / "r.jsonl"
    with pytest.raises(Interrupted) as raised:
        run_evaluation(answer, _examples(10), out, concurrency=2, progress=False, stop=stop)
    assert raised.value.abandoned == 0
    assert "interrupted: 2 examples are finishing" in capsys.readouterr().err
    _, records, _ = read_results(out)
    assert sorted(r["id"] for r in records) == sorted(started) and len(records) == 2


def test_examples_that_cannot_reach_the_server_stop_the_run_unrecorded(tmp_path: Path) -> None:
    down = ConnectionRefusedError(111, "Connection refused")
    watch = ServerWatch(ScriptedLLM(replies=["fine"] * 2 + [down] * 100), pause_s=0.0)

    def answer(example: Example) -> Prediction:
        try:
            return Prediction(answer=watch.complete(Request(prompt=example.id)).text)
        except ServerUnreachableError as error:  # as methods do: recorded, not raised
            return Prediction(error=str(error))

    out = tmp_path / "r.jsonl"
    with pytest.raises(ServerUnreachableError, match="stopped after 3 examples in a row"):
        run_evaluation(answer, _examples(20), out, progress=False, server=watch,
                       max_connection_failures=3)  # fmt: skip
    _, records, _ = read_results(out)
    assert [r["answer"] for r in records] == ["fine", "fine"]  # failures not written
    assert len(watch.inner.requests) < 2 + 3 * 20  # the run stopped early


def test_a_replayed_answer_counts_its_recorded_latency(tmp_path: Path) -> None:
    class Slow(ScriptedLLM):
        def complete(self, request: Request) -> Any:
            time.sleep(0.2)
            completion = super().complete(request)
            return completion.model_copy(update={"latency_s": 0.2})

    cached = ReplayClock(CachedLLM(Slow(replies=["x", "y"]), tmp_path / "c.sqlite"))
    with timing() as live:
        cached.complete(Request(prompt="a"))
    with timing() as replay:
        cached.complete(Request(prompt="a"))  # from the cache now
    assert live.hits == 0 and replay.hits == 1
    assert replay.wall() < 0.1 and replay.duration() == pytest.approx(live.duration(), abs=0.1)
    cached.complete(Request(prompt="b"))  # outside any example: charged to none
