"""A ``concurrent.futures`` executor that runs each submitted call as a Ray task.

For evaluations that outgrow one machine: with
:func:`~tablereason.evaluate.benchmark.run_benchmark` and ``shards=n``, every shard
becomes one Ray task that builds its own model from the run's
:class:`~tablereason.evaluate.benchmark.BenchmarkSpec` and writes its own shard
file; the driver draws one progress line from those files as they grow
(:class:`~tablereason.evaluate.progress.ShardProgress`), and merges them when all
tasks are done. Every node needs tablereason
installed and the run folder and data folder on a shared file system. Serving the
model itself at scale is left to a serving engine (vLLM and the like) behind the
OpenAI-compatible backend: give its URL as the spec's ``base_url``.

Install with ``pip install 'tablereason[ray]'``.

Example:
    >>> from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
    >>> spec = BenchmarkSpec(dataset="wikitq", out="/shared/runs/wikitq",  # doctest: +SKIP
    ...                      model="qwen", base_url="http://vllm:8000/v1")
    >>> with RayExecutor(address="auto") as ray_pool:  # doctest: +SKIP
    ...     summary = run_benchmark(spec, shards=16, executor=ray_pool)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from tablereason.errors import ConfigurationError, MissingDependencyError


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as err:
        raise MissingDependencyError(
            "the Ray executor needs Ray: pip install 'tablereason[ray]' (or pip install ray)"
        ) from err
    return ray


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What each Ray task runs: the submitted call."""
    return fn(*args, **kwargs)


class RayExecutor(Executor):
    """Runs ``submit(fn, *args, **kwargs)`` as Ray tasks; results come back as futures.

    Arguments and results travel between processes (pickled), so submit plain
    values and importable functions, not open models or connections.

    Args:
        address: Cluster to join (``"auto"``, ``"ray://head:10001"``); ``None`` starts a
            local Ray unless one is already running in this process.
        num_cpus: CPUs each task reserves.
        max_retries: Ray retries of a task whose worker died (a shard resumes its file).
        **init_options: Further ``ray.init`` options (``num_cpus=...`` for a local Ray).

    Example:
        >>> with RayExecutor(num_cpus=1, include_dashboard=False) as pool:  # doctest: +SKIP
        ...     pool.submit(pow, 2, 10).result()
        1024
    """

    copies_arguments = True
    """Submitted arguments are pickled to other processes (no live objects)."""

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: float = 1,
        max_retries: int = 1,
        **init_options: Any,
    ) -> None:
        self._ray = _import_ray()
        self._owns = False
        if not self._ray.is_initialized():
            self._ray.init(address=address, **init_options)
            self._owns = True
        elif address is not None or init_options:
            raise ConfigurationError(
                "Ray is already initialised in this process; create RayExecutor() without "
                "address or init options to use it"
            )
        self._task = self._ray.remote(num_cpus=num_cpus, max_retries=max_retries)(_call)
        self._lock = threading.Lock()
        self._refs: list[Any] = []
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Start ``fn(*args, **kwargs)`` as a Ray task.

        Raises:
            RuntimeError: After :meth:`shutdown`.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit to a RayExecutor after shutdown")
            ref = self._task.remote(fn, args, kwargs)
            self._refs.append(ref)
        future: Future[Any] = ref.future()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop accepting tasks; optionally cancel pending ones; stop a Ray it started.

        Args:
            wait: Wait for submitted tasks to finish first.
            cancel_futures: Cancel tasks that have not finished.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            refs = list(self._refs)
        if cancel_futures:
            for ref in refs:
                with contextlib.suppress(Exception):  # already finished or gone
                    self._ray.cancel(ref)
        elif wait and refs:
            self._ray.wait(refs, num_returns=len(refs))
        if self._owns:
            self._ray.shutdown()
