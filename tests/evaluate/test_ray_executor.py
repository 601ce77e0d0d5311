"""The Ray executor, against a local Ray instance with one CPU."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.scripted_server import ScriptedServer, wikitq_reply

from tablereason.errors import ConfigurationError
from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
from tablereason.evaluate.ray_executor import RayExecutor
from tablereason.evaluate.results import read_results
from tablereason.llm import ScriptedLLM

# The README's test command installs the ray extra, so CI runs these; without it they skip.
ray = pytest.importorskip(
    "ray", reason="the Ray executor tests need the ray extra: pip install -e '.[ray]'"
)


@pytest.fixture(scope="module")
def pool() -> Iterator[RayExecutor]:
    executor = RayExecutor(
        num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False
    )
    try:
        yield executor
    finally:
        executor.shutdown(cancel_futures=True)
        assert not ray.is_initialized()


def test_futures_results_and_errors(pool: RayExecutor) -> None:
    # Tasks must be importable on the workers: builtins here, run_shard in real runs.
    futures = [pool.submit(pow, i, 2) for i in range(4)]
    assert [f.result(timeout=60) for f in futures] == [0, 1, 4, 9]
    assert list(pool.map(divmod, [7, 9], [2, 4])) == [(3, 1), (2, 1)]
    with pytest.raises(ValueError, match="invalid literal"):
        pool.submit(int, "not a number").result(timeout=60)


def test_shards_run_as_ray_tasks(
    pool: RayExecutor, fixture_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedServer(wikitq_reply) as server:
        spec = BenchmarkSpec(
            dataset="wikitq",
            out=str(tmp_path / "run"),
            limit=6,
            data_dir=str(fixture_data),
            model="fake-model",
            base_url=server.url,
            concurrency=2,
        )
        summary = run_benchmark(spec, shards=2, executor=pool)
        with pytest.raises(ConfigurationError, match=r"spec\.model"):
            run_benchmark(spec, shards=2, executor=pool, llm=ScriptedLLM(replies=[]))
    assert summary.total == 6 and summary.failed == 0
    config, records, _ = read_results(summary.path)
    assert sorted(r["id"] for r in records) == sorted(
        r["id"]
        for shard in (0, 1)
        for r in read_results(tmp_path / "run" / "shards" / f"results-{shard}-of-2.jsonl")[1]
    )
    assert len(records) == 6 and config.model == "openai:fake-model"
    assert server.counts.replies == 12  # plan and answer per example, from the Ray workers
    # one progress line for both shards, read from the files the workers write
    progress = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[6/6]")]
    assert len(progress) == 1 and "| failed 0 |" in progress[0]
