"""Run a registered method over a benchmark dataset into a run folder.

A run folder holds ``results.jsonl`` (see :mod:`tablereason.evaluate.results`), the
response cache ``responses.sqlite`` (so a rerun replays answers without calling the
model) and, after :func:`tablereason.evaluate.report.build_report`, the report pages.
Rerunning with the same folder continues where the last run stopped.

A :class:`BenchmarkSpec` describes a run with plain values, so it can travel to other
processes or machines: with ``shards=n`` and an executor (threads, processes, or
:class:`~tablereason.evaluate.ray_executor.RayExecutor`), each shard runs as one task
that builds its own model from the spec; the parent shows one progress line read from
the shard files as they grow, and merges the files at the end (checked, see
:mod:`tablereason.evaluate.merge`).

The run's model is watched (:class:`~tablereason.evaluate.server_watch.ServerWatch`):
an unreachable server stops the run after ``max_connection_failures`` examples in a
row. A run refused before its first example (an unknown method, options the method does
not take) leaves no run folder behind.

Example:
    >>> spec = BenchmarkSpec(dataset="wikitq", out="runs/wikitq", limit=20)  # doctest: +SKIP
    >>> run_benchmark(spec).result.percent  # doctest: +SKIP
    45.0
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from tablereason.errors import ConfigurationError
from tablereason.evaluate.merge import check_merge_target
from tablereason.evaluate.progress import ShardProgress
from tablereason.evaluate.replay_clock import ReplayClock
from tablereason.evaluate.results import (
    CACHE_FILE,
    RESULTS_FILE,
    SHARDS_DIR,
    RunConfig,
    find_results,
    prompt_hashes,
    read_results,
    shard_file_name,
)
from tablereason.evaluate.run_loop import wait_for_shards
from tablereason.evaluate.runner import (
    MAX_CONNECTION_FAILURES,
    RunSummary,
    StepHook,
    merge_results,
    parse_shard,
    run_evaluation,
)
from tablereason.evaluate.server_watch import ServerWatch
from tablereason.llm.base import LLM
from tablereason.llm.resolve import base_llm, resolve_llm
from tablereason.methods.base import Method
from tablereason.methods.catalog import build_method

__all__ = [
    "CACHE_FILE",
    "RESULTS_FILE",
    "BenchmarkSpec",
    "find_results",
    "run_benchmark",
    "run_shard",
]


class BenchmarkSpec(BaseModel):
    """Everything that defines an evaluation run, as plain values.

    Attributes:
        dataset: Dataset name (``wikitq``, ``tabfact``, ...).
        out: Run folder.
        split: Split; the dataset's default when ``None``.
        method: Method name; the dataset's default method when ``None``.
        model: Model spec (see :func:`tablereason.llm.base_llm`); the environment's
            default when ``None``.
        base_url: OpenAI-compatible server URL.
        endpoint: The server's API, ``"chat"`` or ``"completion"`` (``$OPENAI_ENDPOINT``,
            else chat, when ``None``).
        timeout: Seconds one request to the server may take in all (the backend's 120 s
            when ``None``).
        constrain: ``"auto"`` or ``"off"`` (see :func:`tablereason.llm.resolve.stack`).
        server_kind: How constraints go to the server (see
            :func:`tablereason.llm.base_llm`); detected when ``None``.
        n_ctx: The embedded model's context window.
        threads: The embedded model's CPU threads.
        profile: Method profile (``"paper"`` or ``"efficient"`` for Chain-of-Table).
        options: Further method options.
        limit: First ``limit`` examples only.
        concurrency: Examples run at once (threads).
        data_dir: Data folder (else ``$TABLEREASON_DATA_DIR``).
        cache: Response cache file; ``<out>/responses.sqlite`` when ``None``, no cache
            when ``""``.
        offline: Answer only from the cache.
        seed: Seed recorded in the configuration and passed to the method.
        traces: Keep each example's trace in its result record (needed for pages).
        sync_interval_s: At most one ``fsync`` of the result file per interval; a killed
            run loses nothing either way (see :class:`~tablereason.evaluate.results.
            ResultWriter`), a machine crash at most this interval's records.
        max_connection_failures: Examples in a row that may fail with the model server
            unreachable before the run stops (0: never stop).
    """

    dataset: str
    out: str
    split: str | None = None
    method: str | None = None
    model: str | None = None
    base_url: str | None = None
    endpoint: str | None = None
    timeout: float | None = None
    constrain: Literal["auto", "off"] = "auto"
    server_kind: str | None = None
    n_ctx: int | None = None
    threads: int | None = None
    profile: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = None
    concurrency: int = 4
    data_dir: str | None = None
    cache: str | None = None
    offline: bool = False
    seed: int | None = None
    traces: bool = True
    sync_interval_s: float = 0.05
    max_connection_failures: int = Field(default=MAX_CONNECTION_FAILURES, ge=0)

    def results_path(self, shard: str | None = None) -> Path:
        """The result file of the whole run, or of one shard (``"i/n"``)."""
        if shard is None:
            return Path(self.out) / RESULTS_FILE
        index, count = shard.split("/")
        return Path(self.out) / SHARDS_DIR / shard_file_name(int(index), int(count))

    def cache_path(self) -> Path | None:
        """The response cache file, or ``None`` when caching is off."""
        if self.cache == "":
            return None
        return Path(self.cache) if self.cache else Path(self.out) / CACHE_FILE


_CACHE_FILES = (CACHE_FILE, *(CACHE_FILE + tail for tail in ("-wal", "-shm", "-journal")))


def _undo(folder: Path, fresh: bool, had: set[str]) -> None:
    """Remove what a refused run made in its folder: the new cache files, a new folder."""
    for name in _CACHE_FILES:
        if name not in had:
            with contextlib.suppress(OSError):
                (folder / name).unlink()
    if fresh:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty: anything else there stays


def _workers_for(llm: LLM, concurrency: int) -> None:
    """Let the embedded model answer ``concurrency`` requests at once, a context each.

    It loads them as the examples contend for them, within its memory budget (see
    :mod:`tablereason.llm.backends.context_pool`); a server needs nothing.
    """
    from tablereason.llm.backends.embedded import LocalLlama

    if isinstance(llm, LocalLlama) and concurrency > llm.workers:
        llm.workers = concurrency


def _method_for(
    spec: BenchmarkSpec, llm: LLM | None, progress: bool
) -> tuple[Method, ServerWatch, LLM, str, dict[str, Any]]:
    """The run's watched model and method; a refusal leaves no new run folder."""
    from tablereason.datasets import DATASETS

    out = Path(spec.out)
    fresh = not out.exists()
    had = {name for name in _CACHE_FILES if (out / name).exists()}
    try:
        bare = llm
        if bare is None:
            bare = base_llm(
                spec.model,
                base_url=spec.base_url,
                endpoint=spec.endpoint,
                timeout=spec.timeout,
                server_kind=spec.server_kind,
                n_ctx=spec.n_ctx,
                threads=spec.threads,
                quiet=not progress,
            )
            _workers_for(bare, spec.concurrency)
        watch = ServerWatch(bare)
        model: LLM = ReplayClock(
            resolve_llm(
                watch, cache=spec.cache_path(), offline=spec.offline, constrain=spec.constrain
            )
        )
        options = dict(spec.options)
        if spec.profile is not None:
            options["profile"] = spec.profile
        if spec.seed is not None:
            options["seed"] = spec.seed
        name = spec.method or DATASETS.get(spec.dataset).default_method
        method = build_method(name, model, task=spec.dataset, data_dir=spec.data_dir, **options)
    except BaseException:
        _undo(out, fresh, had)
        raise
    return method, watch, model, name, options


def run_shard(
    spec: BenchmarkSpec,
    shard: str | None = None,
    *,
    llm: LLM | None = None,
    progress: bool = False,
    executor: Executor | None = None,
    on_step: StepHook | None = None,
    stop: threading.Event | None = None,
) -> RunSummary:
    """Run one shard (or, with ``shard=None``, everything) of ``spec`` into its file.

    Args:
        spec: The run.
        shard: ``"i/n"`` or ``None``.
        llm: A model object to use instead of building one from ``spec.model`` (it is
            still wrapped with the run's cache).
        progress: Show the live progress line.
        executor: Executor for the examples (threads by default).
        on_step: ``on_step(example, step)`` for each step of each example as it completes.
        stop: Set it to stop the shard as Ctrl-C would (running examples finish).

    Returns:
        The shard's :class:`~tablereason.evaluate.runner.RunSummary`.
    """
    from tablereason import __version__
    from tablereason.datasets import DATASETS, load_dataset
    from tablereason.llm.wrappers.usage import PriceTable

    if spec.concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, got {spec.concurrency}")
    parse_shard(shard)  # a malformed shard fails before anything is read or written
    dataset = DATASETS.get(spec.dataset)
    split = spec.split or dataset.default_split
    examples = load_dataset(spec.dataset, split, data_dir=spec.data_dir, limit=spec.limit)
    method, watch, model, method_name, options = _method_for(spec, llm, progress)
    described = method.config()
    settings = described.get("settings") or {}
    config = RunConfig(
        dataset=spec.dataset,
        split=split,
        method=method_name,
        profile=spec.profile or settings.get("profile"),
        model=f"{model.name}:{model.model}",
        seed=spec.seed,
        prompt_hashes=prompt_hashes(described),
        metric=dataset.default_metric,
        limit=spec.limit,
        concurrency=spec.concurrency,
        library_version=__version__,
        extra={"total": len(examples), "options": options, "method_config": described},
    )
    prices = PriceTable()

    def price(prompt_tokens: int, completion_tokens: int) -> float:
        return prices.cost(
            model.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            backend=model.name,
        )

    return run_evaluation(
        method,
        examples,
        spec.results_path(shard),
        config=config,
        concurrency=spec.concurrency,
        shard=shard,
        progress=progress,
        traces=spec.traces,
        executor=executor,
        price=price,
        sync_interval_s=spec.sync_interval_s,
        on_step=on_step,
        server=watch,
        max_connection_failures=spec.max_connection_failures,
        stop=stop,
    )


def run_benchmark(
    spec: BenchmarkSpec,
    *,
    llm: LLM | None = None,
    shards: int | None = None,
    shard: str | None = None,
    executor: Executor | None = None,
    progress: bool = True,
    on_step: StepHook | None = None,
) -> RunSummary:
    """Run ``spec``: in this process, or as ``shards`` tasks on ``executor``.

    Args:
        spec: The run.
        llm: Model object to use instead of ``spec.model`` (not with sharded runs on
            executors that copy their arguments to other processes).
        shards: Split the examples into this many shards, each one task on ``executor``;
            their files are checked and merged into ``results.jsonl`` (see
            :func:`~tablereason.evaluate.merge.merge_shards`).
        shard: Run only this shard (``"i/n"``) here, into ``shards/results-i-of-n.jsonl``.
        executor: Runs the shard tasks (a thread pool, a process pool, a
            :class:`~tablereason.evaluate.ray_executor.RayExecutor`); needed with ``shards``.
        progress: Show the live progress line; for sharded runs one line for all shards,
            read from the shard files as they grow (see
            :class:`~tablereason.evaluate.progress.ShardProgress`).
        on_step: ``on_step(example, step)`` for each step of each example as it
            completes (examples run in this process: not with process or Ray shards).

    Returns:
        The summary of the whole run (for sharded runs, of the merged file).

    Raises:
        ConfigurationError: For bad settings (``shards`` without an executor, ...).
        DatasetError: When the dataset files are missing.
        Interrupted: After Ctrl-C (see :mod:`tablereason.evaluate.run_loop`).
        ServerUnreachableError: When the model server stayed unreachable.
    """
    if shard is not None and shards is not None:
        raise ConfigurationError("give either shard ('i/n', one shard here) or shards, not both")
    if shards is None:
        return run_shard(spec, shard, llm=llm, progress=progress, on_step=on_step)
    if shards < 1:
        raise ConfigurationError(f"shards must be at least 1, got {shards}")
    if executor is None:
        raise ConfigurationError("a sharded run needs an executor to run the shard tasks")
    if llm is not None and getattr(executor, "copies_arguments", False):
        raise ConfigurationError(
            "this executor copies its tasks to other processes; give the model as "
            "spec.model (and spec.base_url) instead of an llm object"
        )
    spec = _absolute(spec)
    check_merge_target(spec.results_path())
    specs = [f"{i}/{shards}" for i in range(shards)]
    paths = [spec.results_path(s) for s in specs]
    # Shards on threads share one stop event, so Ctrl-C here lets each finish its
    # running examples; shards in other processes receive Ctrl-C themselves.
    shared = isinstance(executor, ThreadPoolExecutor)
    stop = threading.Event()
    with ShardProgress(paths) if progress else contextlib.nullcontext():
        futures = [
            executor.submit(run_shard, spec, shard, llm=llm, **_shard_hooks(shared, stop, on_step))
            for shard in specs
        ]
        parts = wait_for_shards(futures, stop)
    merged = merge_results(paths, spec.results_path())
    return _merged_summary(merged, parts)


def _shard_hooks(shared: bool, stop: threading.Event, on_step: StepHook | None) -> dict[str, Any]:
    """What shard tasks on threads share with this process: the stop event, the hook."""
    return {"stop": stop, "on_step": on_step} if shared else {}


def _absolute(spec: BenchmarkSpec) -> BenchmarkSpec:
    """The spec with absolute paths, for tasks that run in other working directories."""
    from tablereason.datasets import DATA_DIR_ENV

    data_dir = spec.data_dir or os.environ.get(DATA_DIR_ENV)
    update: dict[str, Any] = {
        "out": os.path.abspath(spec.out),
        "data_dir": os.path.abspath(data_dir) if data_dir else None,
    }
    if spec.cache:
        update["cache"] = os.path.abspath(spec.cache)
    return spec.model_copy(update=update)


def _merged_summary(path: Path, parts: list[RunSummary]) -> RunSummary:
    config, records, _ = read_results(path)
    total = sum(p.total for p in parts)
    result = None
    if parts and parts[0].result is not None:
        from tablereason.metrics.scorers import GroupScore, MetricResult

        correct = sum(p.result.correct for p in parts if p.result is not None)
        groups: dict[str, list[float]] = {}
        for part in parts:
            for name, group in (part.result.breakdown if part.result else {}).items():
                bucket = groups.setdefault(name, [0.0, 0.0])
                bucket[0] += group.correct
                bucket[1] += group.n
        companions = {
            name: sum(p.result.companions.get(name, 0.0) * p.total for p in parts if p.result)
            / total
            if total
            else 0.0
            for name in parts[0].result.companions
        }
        result = MetricResult(
            metric=parts[0].result.metric,
            score=correct / total if total else 0.0,
            n=total,
            correct=correct,
            companions=companions,
            breakdown={
                g: GroupScore(score=c / k if k else 0.0, n=int(k), correct=c)
                for g, (c, k) in groups.items()
            },
        )
    return RunSummary(
        path=path,
        config=config,
        total=total,
        resumed=sum(p.resumed for p in parts),
        ran=sum(p.ran for p in parts),
        failed=sum(1 for r in records if r.get("error")),
        tokens=sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in records),
        wall_s=max((p.wall_s for p in parts), default=0.0),
        result=result,
    )
