"""The step listener: each step of the followed trace reported once, in order, when complete."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tablereason.trace import Prediction, Trace, TraceStep
from tablereason.trace.listen import current_feed, following


def test_timed_steps_are_reported_when_stopped_and_others_when_the_next_comes() -> None:
    seen: list[str] = []
    with following(lambda step: seen.append(step.name)):
        trace = Trace(question="q")
        trace.add(TraceStep(kind="input", name="table"))
        assert seen == []  # it may still change: nothing says it is complete
        plan = trace.add(TraceStep(kind="plan", name="plan")).start()
        assert seen == ["table"]  # the method moved on
        plan.arguments["chosen"] = "f_select_row"
        assert seen == ["table"]  # still running
        plan.stop()
        assert seen == ["table", "plan"]
        trace.add(TraceStep(kind="answer", name="final"))
        assert seen == ["table", "plan"]
    assert seen == ["table", "plan", "final"]  # the run is over: the last one too


def test_each_step_is_reported_once_and_in_trace_order() -> None:
    seen: list[str] = []
    with following(lambda step: seen.append(step.name)):
        trace = Trace()
        first = trace.add(TraceStep(kind="module", name="a")).start()
        second = trace.add(TraceStep(kind="module", name="b")).start()
        second.stop()
        assert seen == []  # b waits for a, so the order is the trace's
        first.stop()
        first.stop()  # a second stop changes nothing
        assert seen == ["a", "b"]
        trace.add(TraceStep(kind="error", name="Boom"))  # an error ends what runs
    assert seen == ["a", "b", "Boom"]


def test_an_error_step_completes_the_steps_still_running() -> None:
    seen: list[str] = []
    with following(lambda step: seen.append(step.name)):
        trace = Trace()
        trace.add(TraceStep(kind="plan", name="plan")).start()
        trace.add(TraceStep(kind="error", name="LLMError", error="down"))
        assert seen == ["plan"]
    assert seen == ["plan", "LLMError"]


def test_only_the_first_trace_is_followed_not_those_of_tools_and_nested_methods() -> None:
    seen: list[str] = []
    with following(lambda step: seen.append(step.name)) as feed:
        outer = Trace(question="outer")
        inner = Trace(question="asked by a tool")
        inner.add(TraceStep(kind="plan", name="inner"))
        outer.add(TraceStep(kind="tool", name="outer"))
        assert feed.trace is outer
    assert seen == ["outer"]


def test_steps_added_from_other_threads_reach_the_feed_of_their_trace() -> None:
    seen: list[str] = []
    with following(lambda step: seen.append(step.name)):
        trace = Trace()

        def work(name: str) -> None:
            assert current_feed() is None  # a plain thread does not inherit the context
            trace.add(TraceStep(kind="tool", name=name)).start().stop()

        threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(seen) == ["t0", "t1", "t2", "t3"]
    assert seen == [s.name for s in trace.steps]


def test_asyncio_tasks_see_the_same_feed() -> None:
    seen: list[str] = []

    async def run() -> Trace:
        async def make() -> Trace:
            trace = Trace()
            trace.add(TraceStep(kind="plan", name="in a task")).start().stop()
            return trace

        return await asyncio.create_task(make())

    with following(lambda step: seen.append(step.name)) as feed:
        trace = asyncio.run(run())
        assert feed.trace is trace
    assert seen == ["in a task"]


def test_starts_are_heard_and_nothing_is_reported_after_the_block() -> None:
    started: list[str] = []
    seen: list[str] = []
    with following(lambda s: seen.append(s.name), on_start=lambda s: started.append(s.name)):
        trace = Trace()
        step = trace.add(TraceStep(kind="plan", name="plan")).start()
        assert started == ["plan"] and seen == []
    assert seen == ["plan"]  # reported at the end even though it never stopped
    step.stop()
    trace.add(TraceStep(kind="answer", name="late"))
    assert seen == ["plan"]
    assert current_feed() is None


def test_a_trace_outside_any_block_reports_nothing_and_a_prediction_stops_its_steps() -> None:
    trace = Trace()
    step = trace.add(TraceStep(kind="plan", name="plan")).start()
    prediction = Prediction(answer="x", trace=trace)
    assert not step.running and prediction.trace.steps == [step]


def test_a_failing_callback_reaches_the_code_that_completed_the_step() -> None:
    def boom(step: TraceStep) -> None:
        raise RuntimeError(f"listener failed on {step.name}")

    with pytest.raises(RuntimeError, match="listener failed on a"), following(boom):
        trace = Trace()
        trace.add(TraceStep(kind="plan", name="a")).start().stop()
