"""Durations of steps that fail, and keys kept out of traces."""

from __future__ import annotations

import io
import json
import re
import time
from typing import Any

import pytest

from tablereason.api import ask
from tablereason.errors import LLMError
from tablereason.llm import Request, ScriptedLLM
from tablereason.table import Table
from tablereason.trace import Prediction, Trace, TraceStep

KEY = "sk-live-abcdefgh0123456789SECRET"
TABLE = Table.from_records(["team", "wins"], [["north", "3"], ["south", "5"]])


def rejecting(delay: float) -> ScriptedLLM:
    """A model that fails every request after ``delay`` seconds, as a rejected key does."""

    def fail(request: Request) -> Any:
        time.sleep(delay)
        raise LLMError(f"the server rejected the request with HTTP 401: bad key {KEY}")

    return ScriptedLLM(fn=fail)


@pytest.mark.parametrize(
    ("method", "options"),
    [("chain_of_table", {}), ("chameleon", {"task": "tabmwp"})],
)
def test_a_step_that_fails_lasts_until_the_failure(method: str, options: dict[str, Any]) -> None:
    prediction = ask(TABLE, "which team won most?", method=method, llm=rejecting(0.05), **options)
    assert prediction.error
    failed = [s for s in prediction.trace.steps if s.kind == "plan"]
    assert failed, [s.kind for s in prediction.trace.steps]
    # it ran 50 ms and then failed: neither a start time (seconds since boot) nor zero
    assert 0.04 <= failed[0].duration_s < 5.0
    shown = io.StringIO()
    prediction.print(file=shown)
    times = [int(ms) for ms in re.findall(r"plan → \w+\s+\((\d+) ms\)", shown.getvalue())]
    assert times and all(40 <= ms < 5000 for ms in times), shown.getvalue()


def test_failed_steps_keep_their_duration_through_json() -> None:
    prediction = ask(TABLE, "which team won most?", llm=rejecting(0.02))
    data = json.loads(prediction.trace.to_json())
    plan = next(s for s in data["steps"] if s["kind"] == "plan")
    assert 0.01 <= plan["duration_s"] < 5.0
    again = Trace.from_dict(data)
    assert [s.duration_s for s in again.steps] == [s["duration_s"] for s in data["steps"]]


def test_start_and_stop() -> None:
    step = TraceStep(kind="operation", name="sort").start()
    assert step.running and step.duration_s == 0.0
    time.sleep(0.01)
    assert step.stop().duration_s >= 0.01 and not step.running
    kept = step.duration_s
    assert step.stop().duration_s == kept  # stopping twice changes nothing
    given = TraceStep(kind="tool", name="t", duration_s=1.5)
    assert given.stop().duration_s == 1.5  # never started: the given duration stays


def test_an_error_step_or_the_prediction_ends_running_steps() -> None:
    trace = Trace()
    first = trace.add(TraceStep(kind="plan", name="plan").start())
    time.sleep(0.01)
    trace.add(TraceStep(kind="error", name="LLMError", error="boom"))
    assert not first.running and first.duration_s >= 0.01
    second = Trace()
    step = second.add(TraceStep(kind="operation", name="op").start())
    Prediction(trace=second, error="example lost")
    assert not step.running and step.duration_s > 0.0


def test_keys_are_redacted_from_trace_pages_and_the_prediction() -> None:
    prediction = ask(TABLE, "which team won most?", llm=rejecting(0.0))
    assert KEY not in (prediction.error or "")
    assert KEY not in prediction.trace.to_json()
    assert KEY not in prediction.to_html()
    shown = io.StringIO()
    prediction.print(file=shown)
    assert KEY not in shown.getvalue() and "[redacted]" in shown.getvalue()
    step = TraceStep(kind="tool", name="t", error=f"Bearer {KEY}", note=f"key={KEY}")
    assert KEY not in json.dumps(step.to_dict())
