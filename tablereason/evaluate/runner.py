"""Run a method over examples: concurrent, streamed to JSON lines, resumable, shardable.

A method is a :class:`~tablereason.methods.base.Method` (each example goes to
``method.run(example)``), or any callable ``answer(example) -> Prediction`` (a bare
answer is accepted too), for quick experiments. Results go to a JSONL file (see
:mod:`tablereason.evaluate.results`) as each example finishes; killing the run at any
moment and rerunning with the same output path continues where it stopped, with no
example lost or counted twice. Ctrl-C lets the running examples finish (a second one
stops at once), and a run whose model server has gone away stops; see
:mod:`tablereason.evaluate.run_loop`.

Each record's ``duration_s`` is the example's time as if every answer came from the
model: answers replayed from the response cache count the latency recorded with them
(:mod:`tablereason.evaluate.replay_clock`), so resumed runs do not skew the report.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError
from tablereason.evaluate.progress import ProgressLine
from tablereason.evaluate.replay_clock import timing
from tablereason.evaluate.results import (
    RunConfig,
    open_results,
    prompt_hashes,
    read_results,
)
from tablereason.evaluate.run_loop import Collector, collect
from tablereason.evaluate.server_watch import ServerWatch
from tablereason.methods.base import Method
from tablereason.metrics.scorers import METRICS, Metric, MetricResult
from tablereason.trace.listen import following
from tablereason.trace.record import Prediction, TraceStep

Answerer = Callable[[Example], "Prediction | str | list[str] | None"]
"""A plain function that answers an example, runnable in place of a :class:`Method`."""
StepHook = Callable[[Example, TraceStep], None]
"""``on_step(example, step)``: called with each step of an example as it completes."""
MAX_CONNECTION_FAILURES = 3
"""Examples in a row that may fail with the server unreachable before a run stops."""


def parse_shard(spec: str | None) -> tuple[int, int] | None:
    """Parse ``"i/n"`` (0-based ``i`` with ``0 <= i < n``) or ``None``.

    Example:
        >>> parse_shard("1/4")
        (1, 4)
    """
    if spec is None:
        return None
    try:
        index, count = (int(p) for p in spec.split("/"))
    except ValueError:
        raise ConfigurationError(
            f"shard must look like 'i/n' with integers, e.g. '0/4', got {spec!r}"
        ) from None
    if count < 1 or not 0 <= index < count:
        raise ConfigurationError(f"shard {spec!r}: need 0 <= i < n (shards are numbered from 0)")
    return index, count


def shard_examples(examples: Sequence[Example], shard: str | None) -> list[Example]:
    """The examples of one shard: every n-th example starting at position i.

    Example:
        >>> [e.id for e in shard_examples(
        ...     [Example(dataset="d", id=str(i), question="", answer="") for i in range(5)], "1/2")]
        ['1', '3']
    """
    parsed = parse_shard(shard)
    if parsed is None:
        return list(examples)
    index, count = parsed
    return list(examples[index::count])


@dataclass
class RunSummary:
    """What a run did.

    Attributes:
        path: The result file.
        config: The run configuration.
        total: Examples in this run (after sharding).
        resumed: Examples already in the file, not run again.
        ran: Examples run now.
        failed: Examples whose prediction failed (in the whole file).
        tokens: Tokens spent (in the whole file).
        wall_s: Wall time of this call.
        result: The metric over the run's examples, when a metric was given.
        unreachable: Examples run now that could not reach the model server: not
            recorded, so a rerun runs them.
    """

    path: Path
    config: RunConfig
    total: int
    resumed: int
    ran: int
    failed: int
    tokens: int
    wall_s: float
    result: MetricResult | None
    unreachable: int = 0


def _as_prediction(value: Any) -> Prediction:
    if isinstance(value, Prediction):
        return value
    if value is None:
        return Prediction(error="the method returned None")
    if isinstance(value, (str, list)):
        return Prediction(answer=value)
    return Prediction(answer=str(value))


Price = Callable[[int, int], float]
"""``price(prompt_tokens, completion_tokens) -> dollars``."""


def _table_shape(example: Example) -> tuple[int, int] | None:
    if not example.has_table:
        return None
    try:
        table = example.table  # built (and cached) when the method ran
    except Exception:  # a table that cannot be built has no size
        return None
    return None if table is None else (table.num_rows, len(table.columns))


def _checks(prediction: Prediction, example: Example, traces: bool) -> dict[str, Any]:
    """The prediction's value, evidence and warnings, citing the example's own table.

    A method that read a copy of the table (lower-cased, say) is checked again against
    the example's table. Without traces the evidence keeps no marks (they point into
    the trace's tables).
    """
    table = None
    if example.has_table:
        with contextlib.suppress(Exception):  # a table that cannot be built cites nothing
            table = example.table
    first = next((s.table for s in prediction.trace.steps if s.kind == "input"), None)
    if table is not None and first is not None and first is not table:
        prediction = prediction.checked(table)
    checks = prediction.checks()
    if not traces and checks["evidence"]:
        checks["evidence"]["marks"] = {}
    return checks


def _score(metric: Metric, prediction: Prediction, example: Example) -> float:
    """One example's score under ``metric``; a failed or unscorable answer scores 0."""
    try:
        answer = metric.read(prediction, example)  # None for a failed prediction
        return 0.0 if answer is None else float(metric.score_example(answer, example))
    except Exception:  # an unscorable answer is a wrong answer
        return 0.0


def _run_one(
    answer: Answerer,
    example: Example,
    metric: Metric | None,
    traces: bool,
    price: Price | None = None,
    on_step: StepHook | None = None,
) -> dict[str, Any]:
    steps = following(functools.partial(on_step, example)) if on_step is not None else None
    with timing() as clock:
        try:
            with steps if steps is not None else contextlib.nullcontext():
                prediction = _as_prediction(answer(example))
        except Exception as exc:  # a failing example is recorded, never stops the run
            prediction = Prediction(error=f"{type(exc).__name__}: {exc}")
    duration = clock.duration()
    score = None if metric is None else _score(metric, prediction, example)
    usage = prediction.trace.usage
    record: dict[str, Any] = {
        "type": "result",
        "id": example.id,
        "answer": prediction.answer,
        "error": prediction.error,
        "gold": example.answer,
        "score": score,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "requests": usage.requests,
        "duration_s": round(duration, 6),
        "steps": len(prediction.trace.steps),
        "operations": sum(
            1 for s in prediction.trace.steps if s.kind == "operation" and not s.error
        ),
    }
    record.update(_checks(prediction, example, traces))
    if clock.hits:  # answers replayed from the cache: what this run itself took
        record["replayed"] = {"answers": clock.hits, "wall_s": round(clock.wall(), 6)}
    shape = _table_shape(example)
    record["table_rows"], record["table_columns"] = shape if shape else (None, None)
    if prediction.has_raw_answer:  # what the published TabMWP scoring reads
        record["raw_answer"] = prediction.raw_answer
    if metric is not None and metric.companions:
        record["companion_scores"] = {
            name: _score(METRICS.get(name), prediction, example) for name in metric.companions
        }
    if metric is not None:
        try:
            record["groups"] = [str(g) for g in metric.groups(example)]
        except Exception:  # breakdown groups are optional
            record["groups"] = []
    if price is not None:
        record["cost"] = price(usage.prompt_tokens, usage.completion_tokens)
    if traces:
        try:
            record["trace"] = prediction.trace.to_dict()
        except Exception as exc:  # keep the result even if the trace cannot be serialised
            record["trace"] = {"error": f"trace not serialisable: {exc}"}
    return record


def run_evaluation(
    method: Method | Answerer,
    examples: Sequence[Example],
    out: str | os.PathLike[str],
    *,
    config: RunConfig | None = None,
    metric: str | None = None,
    concurrency: int = 1,
    shard: str | None = None,
    progress: bool = True,
    traces: bool = True,
    executor: Executor | None = None,
    price: Price | None = None,
    sync_interval_s: float = 0.0,
    on_step: StepHook | None = None,
    server: ServerWatch | None = None,
    max_connection_failures: int = MAX_CONNECTION_FAILURES,
    stop: threading.Event | None = None,
) -> RunSummary:
    """Run ``method`` on every example (of one shard) and stream results to ``out``.

    Args:
        method: A :class:`~tablereason.methods.base.Method` (run as
            ``method.run(example)``) or a function ``answer(example) -> Prediction``;
            exceptions are recorded as failures.
        examples: The examples asked for (the metric's denominator).
        out: Result file (JSON lines). An existing file of the same run is continued.
        config: Run configuration for the file's first line; built from the arguments
            when ``None`` (with a Method, its config and every prompt hash in it, so a
            rerun after a prompt changed refuses the file).
        metric: Metric name for live accuracy and the final result; the configuration's
            metric when ``None``.
        concurrency: Worker threads.
        shard: ``"i/n"``: run only every n-th example starting at i.
        progress: Show a live progress line on stderr.
        traces: Store each prediction's trace in its record.
        executor: A ``concurrent.futures`` executor to use instead of a thread pool.
        price: ``price(prompt_tokens, completion_tokens) -> dollars``; each record then
            carries its ``cost`` and the progress line the cost so far.
        sync_interval_s: Batch the result file's ``fsync`` calls to one per interval
            (0: one per record). Either way a killed run loses nothing; see
            :class:`~tablereason.evaluate.results.ResultWriter`.
        on_step: ``on_step(example, step)``, called with each step of each example as
            it completes (from the thread running the example; with executors that run
            examples in other processes it is not called).
        server: The watch on the method's model (see
            :class:`~tablereason.evaluate.server_watch.ServerWatch`): examples that fail
            while it finds the server unreachable are not recorded.
        max_connection_failures: With ``server``, stop the run when this many examples
            in a row fail that way (0: never).
        stop: Set it (from another thread) to stop as Ctrl-C does.

    Returns:
        A :class:`RunSummary`.

    Raises:
        Interrupted: After Ctrl-C or ``stop``; the results written so far are kept.
        ServerUnreachableError: When the server stayed unreachable (see ``server``).

    Example:
        >>> summary = run_evaluation(lambda ex: ex.answer, examples, "runs/x.jsonl",
        ...                          metric="wikitq_accuracy")  # doctest: +SKIP
    """
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, got {concurrency}")
    ids = [e.id for e in examples]
    if len(set(ids)) != len(ids):
        raise ConfigurationError("example ids must be unique for a resumable run")
    if config is None:
        from tablereason import __version__

        described = method.config() if isinstance(method, Method) else {}
        config = RunConfig(
            dataset=examples[0].dataset if examples else "",
            method=getattr(method, "__name__", type(method).__name__),
            prompt_hashes=prompt_hashes(described),
            metric=metric,
            concurrency=concurrency,
            library_version=__version__,
            extra={"total": len(examples), **({"method_config": described} if described else {})},
        )
    config = config.model_copy(
        update={"shard": shard, "concurrency": concurrency, "metric": metric or config.metric}
    )
    scorer = METRICS.get(config.metric) if config.metric else None
    answer: Answerer = method.run if isinstance(method, Method) else method
    mine = shard_examples(examples, shard)
    started = time.perf_counter()
    writer = open_results(out, config, sync_interval_s=sync_interval_s)
    pending = [e for e in mine if e.id not in writer.done]
    resumed = len(mine) - len(pending)
    bar = ProgressLine(len(pending), show_cost=price is not None) if progress and pending else None

    def keep(record: dict[str, Any]) -> None:
        writer.write(record)
        if bar is not None:
            tokens = record["prompt_tokens"] + record["completion_tokens"]
            bar.update(
                score=record["score"],
                tokens=tokens,
                failed=bool(record["error"]),
                cost=record.get("cost") or 0.0,
            )

    collector = Collector(keep, server, max_connection_failures)
    pool = executor or ThreadPoolExecutor(max_workers=concurrency)
    futures: list[Future[dict[str, Any]]] = []
    try:
        futures = [
            pool.submit(_run_one, answer, e, scorer, traces, price, on_step) for e in pending
        ]
        collect(futures, collector, stop=stop)
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    finally:
        writer.close()
        if executor is None:
            pool.shutdown(wait=False, cancel_futures=True)
    done = [writer.done[e.id] for e in mine if e.id in writer.done]
    result = None
    if scorer is not None:
        result = scorer({r["id"]: r for r in done}, mine)
    return RunSummary(
        path=Path(out),
        config=config,
        total=len(mine),
        resumed=resumed,
        ran=len(pending),
        failed=sum(1 for r in done if r.get("error")),
        tokens=sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in done),
        wall_s=time.perf_counter() - started,
        result=result,
        unreachable=collector.unreachable,
    )


def merge_results(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    allow_partial: bool = False,
) -> Path:
    """Merge the shard result files of one run into ``out``, checked.

    See :func:`tablereason.evaluate.merge.merge_shards`: the files must share the run
    configuration and together hold every example exactly once.

    Raises:
        ResultFileError: When the files come from different runs, or (without
            ``allow_partial``) shards are missing or incomplete.
    """
    from tablereason.evaluate.merge import merge_shards

    return merge_shards(paths, out, allow_partial=allow_partial).path


def score_results(
    path: str | os.PathLike[str], examples: Sequence[Example], metric: str | None = None
) -> MetricResult:
    """Score a result file against ``examples`` (missing ids count as wrong).

    Raises:
        ConfigurationError: When no metric is given and the file names none.
    """
    config, records, _ = read_results(path)
    name = metric or config.metric
    if not name:
        raise ConfigurationError(f"{path} names no metric; pass metric='...'")
    return METRICS.get(name)({str(r["id"]): r for r in records}, examples)
