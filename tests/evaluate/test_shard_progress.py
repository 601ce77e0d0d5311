"""One live progress line for sharded runs, read from the shard files as they grow."""

from __future__ import annotations

import io
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.scripted_server import wikitq_reply

from tablereason.datasets import load_dataset
from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
from tablereason.evaluate.progress import ResultTail, ShardProgress
from tablereason.evaluate.report import summarize
from tablereason.evaluate.results import ResultWriter, RunConfig, open_results
from tablereason.llm import Request, ScriptedLLM

LIMIT = 9
LINE = re.compile(
    r"\[(\d+)/(\d+)\] acc +([\d.]+)% \| failed (\d+) \| tokens ([\d,]+) \| \$([\d.,]+) \|"
)


def _record(i: int, score: float, *, error: str | None = None) -> dict[str, object]:
    return {
        "type": "result",
        "id": f"ex{i}",
        "score": score,
        "error": error,
        "prompt_tokens": 100,
        "completion_tokens": 25,
        "cost": 0.01,
    }


def _open(path: Path, shard: str, total: int) -> ResultWriter:
    config = RunConfig(dataset="d", method="m", shard=shard, extra={"total": total})
    return open_results(path, config)


def test_aggregates_the_records_the_shards_append(tmp_path: Path) -> None:
    paths = [tmp_path / "results-0-of-2.jsonl", tmp_path / "results-1-of-2.jsonl"]
    first = _open(paths[0], "0/2", 6)
    first.write(_record(0, 1.0))  # there before the run: resumed, not counted
    stream = io.StringIO()
    progress = ShardProgress(paths, stream=stream, interval_s=3600)
    progress.start()
    assert progress.resumed == 1 and progress.total == 6
    assert progress.poll() == 0 and progress.bar is None

    second = _open(paths[1], "1/2", 6)  # a shard that starts later
    first.write(_record(2, 0.0, error="LLMError: outage"))
    second.write(_record(1, 1.0))
    assert progress.poll() == 2
    with paths[1].open("ab") as handle:  # a line still being written is not read yet
        handle.write(b'{"type": "result", "id": "ex3", "score": 1.0, "prompt_')
    assert progress.poll() == 0
    with paths[1].open("ab") as handle:
        handle.write(b'tokens": 100, "completion_tokens": 25, "cost": 0.01}\n')
    first.write(_record(4, 0.0))
    second.write(_record(5, 1.0))
    first.close()
    second.close()
    progress.stop()
    assert progress.bar is not None
    assert (progress.bar.total, progress.bar.done, progress.bar.failed) == (5, 5, 1)
    last = stream.getvalue().splitlines()[-1]
    match = LINE.match(last)
    assert match is not None, last
    assert match.groups() == ("5", "5", "60.0", "1", "625", "0.0500")
    assert last.endswith("ETA 0m00s")


def test_the_final_line_is_drawn_when_the_run_stops_early(tmp_path: Path) -> None:
    path = tmp_path / "results-0-of-1.jsonl"
    stream = io.StringIO()
    with ShardProgress([path], stream=stream, interval_s=0.01):
        writer = _open(path, "0/1", 4)  # the total comes from the configuration line
        writer.write(_record(0, 1.0))
        writer.write(_record(1, 0.0))
        writer.close()
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("[2/4] acc  50.0% | failed 0 | tokens 250 | $0.0200 |")
    assert len([line for line in lines if line.startswith("[2/4]")]) == 1


def test_result_tail_reads_only_new_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    tail = ResultTail(path)
    assert tail.read() == []  # no file yet
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c"')
    assert tail.read() == [{"a": 1}, {"b": 2}]
    assert tail.offset == len(b'{"a": 1}\n{"b": 2}\n')
    assert tail.read() == []
    with path.open("ab") as handle:
        handle.write(b": 3}\nnot json\n")
    assert tail.read() == [{"c": 3}]


def _replies(data_dir: Path) -> ScriptedLLM:
    """First-cell answers, except the gold answer for every other question."""
    examples = load_dataset("wikitq", "test", data_dir=data_dir, limit=LIMIT)
    gold = {e.question: e.answers for i, e in enumerate(examples) if i % 2 == 0}

    def reply(request: Request) -> str:
        prompt = request.as_text()
        asked = re.findall(r"Question: (.*)", prompt)
        if prompt.rstrip().endswith("The answer is:") and asked and asked[-1] in gold:
            return " " + " | ".join(gold[asked[-1]])
        return wikitq_reply(prompt)

    return ScriptedLLM(fn=reply, model="gpt-4")


@pytest.mark.parametrize("quiet", [False, True])
def test_sharded_benchmark_shows_one_line_for_all_shards(
    fixture_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], quiet: bool
) -> None:
    spec = BenchmarkSpec(
        dataset="wikitq", out=str(tmp_path / "run"), limit=LIMIT, data_dir=str(fixture_data)
    )
    with ThreadPoolExecutor(max_workers=3) as pool:
        summary = run_benchmark(
            spec,
            llm=_replies(fixture_data),
            shards=3,
            executor=pool,
            progress=not quiet,
        )
    err = capsys.readouterr().err
    if quiet:
        assert "acc" not in err
        return
    lines = [line for line in err.splitlines() if LINE.match(line)]
    assert lines, err
    match = LINE.match(lines[-1])
    assert match is not None
    done, total, accuracy, failed, tokens, cost = match.groups()
    assert summary.result is not None and 0 < summary.result.score < 1
    assert (done, total, failed) == ("9", "9", "0")
    assert accuracy == f"{100 * summary.result.score:.1f}"
    assert int(tokens.replace(",", "")) == summary.tokens > 0
    assert float(cost) == pytest.approx(summarize(summary.path).cost, abs=1e-4)
    assert sum(1 for line in lines if line.startswith("[9/9]")) == 1
