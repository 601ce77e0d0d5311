"""Merging shard result files: same run, every example once, missing and incomplete shards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_examples import tabfact_examples

from tablereason.datasets import Example
from tablereason.errors import ConfigurationError
from tablereason.evaluate.merge import (
    check_shards,
    find_shard_files,
    merge_inputs,
    merge_shards,
    shard_file_name,
)
from tablereason.evaluate.report import summarize
from tablereason.evaluate.results import ResultFileError, RunConfig, read_results
from tablereason.evaluate.runner import merge_results, run_evaluation, score_results
from tablereason.trace import Prediction

N = 11


def _examples(n: int = N) -> list[Example]:
    return tabfact_examples(n)


def _answer(example: Example) -> Prediction:
    # right unless the position is a multiple of 3
    i = int(example.id[2:])
    return Prediction(answer="maybe" if i % 3 == 0 else example.answer)


def _config(**changes: object) -> RunConfig:
    base = RunConfig(
        dataset="tabfact",
        split="test",
        method="answer",
        model="scripted:m",
        prompt_hashes={"plan": "aaa", "answer": "bbb"},
        metric="tabfact_accuracy",
    )
    return base.model_copy(update=changes)


def _shards(
    folder: Path, count: int = 3, *, config: RunConfig | None = None, n: int = N
) -> list[Path]:
    paths = []
    for i in range(count):
        path = folder / "shards" / shard_file_name(i, count)
        run_evaluation(
            _answer,
            _examples(n),
            path,
            config=(config or _config()).model_copy(update={"extra": {"total": n}}),
            shard=f"{i}/{count}",
            progress=False,
        )
        paths.append(path)
    return paths


def _drop_last_line(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")


def test_complete_shards_merge_to_the_unsharded_scores(tmp_path: Path) -> None:
    paths = _shards(tmp_path / "run")
    whole = run_evaluation(
        _answer, _examples(), tmp_path / "whole.jsonl", config=_config(), progress=False
    )
    merged = merge_shards(paths, tmp_path / "run" / "results.jsonl")
    assert merged.complete and merged.problems == []
    assert (merged.records, merged.count, merged.total) == (N, 3, N)
    config, records, _ = read_results(merged.path)
    assert config.shard is None and config.extra["shards"] == ["0/3", "1/3", "2/3"]
    assert config.extra["complete"] is True
    assert sorted(r["id"] for r in records) == sorted(e.id for e in _examples())
    assert whole.result is not None
    assert score_results(merged.path, _examples()).score == whole.result.score
    report, plain = summarize(merged.path), summarize(whole.path)
    assert (report.total, report.done, report.score) == (plain.total, plain.done, plain.score)
    assert [(b.label, b.n, b.correct) for b in report.breakdown] == [
        (b.label, b.n, b.correct) for b in plain.breakdown
    ]
    # merging again replaces the earlier merge
    assert merge_results(paths, merged.path) == merged.path
    assert len(read_results(merged.path)[1]) == N


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"model": "scripted:other"}, "model ('scripted:m' vs 'scripted:other')"),
        ({"seed": 7}, "seed (None vs 7)"),
        ({"profile": "paper"}, "profile"),
        ({"prompt_hashes": {"plan": "aaa", "answer": "ccc"}}, "prompt_hashes['answer']"),
        ({"split": "dev"}, "split"),
        ({"metric": "wikitq_accuracy"}, "metric"),
    ],
)
def test_shards_of_different_runs_are_refused_naming_the_field(
    tmp_path: Path, change: dict[str, object], named: str
) -> None:
    good = _shards(tmp_path / "a", 2)
    other = _shards(tmp_path / "b", 2, config=_config(**change))
    out = tmp_path / "merged.jsonl"
    with pytest.raises(ResultFileError, match="different run") as caught:
        merge_shards([good[0], other[1]], out)
    assert named in str(caught.value)
    assert str(other[1]) in str(caught.value)
    assert not out.exists()


def test_shards_of_a_run_with_another_size_are_refused(tmp_path: Path) -> None:
    small = _shards(tmp_path / "a", 2, n=9)
    large = _shards(tmp_path / "b", 2)
    with pytest.raises(ResultFileError, match=r"number of examples \(9 vs 11\)"):
        check_shards([small[0], large[1]])


def test_missing_and_incomplete_shards_are_reported(tmp_path: Path) -> None:
    paths = _shards(tmp_path / "run", 4)
    paths[2].unlink()
    _drop_last_line(paths[1])
    out = tmp_path / "run" / "results.jsonl"
    with pytest.raises(ResultFileError) as caught:
        merge_shards([paths[0], paths[1], paths[3]], out)
    message = str(caught.value)
    assert "shard 1/4 is incomplete: 2 of 3 results" in message
    assert f"shard 2/4 is missing (no {paths[2]})" in message
    assert "--allow-partial" in message and "--shard i/n" in message
    assert not out.exists()

    merged = merge_shards([paths[0], paths[1], paths[3]], out, allow_partial=True)
    assert not merged.complete and len(merged.problems) == 2
    assert merged.records == N - 3 - 1
    config, _, _ = read_results(out)
    assert config.extra["complete"] is False and config.extra["shards"] == ["0/4", "1/4", "3/4"]
    report = summarize(out)
    assert (report.total, report.done) == (N, N - 4)  # the missing ones count as wrong
    expected = score_results(out, _examples())
    assert report.score == pytest.approx(expected.score)


def test_repeated_shards_other_splits_and_overlaps_are_refused(tmp_path: Path) -> None:
    three = _shards(tmp_path / "three", 3)
    two = _shards(tmp_path / "two", 2)
    with pytest.raises(ResultFileError, match="split the run differently"):
        check_shards([three[0], two[1]])
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(three[1].read_bytes())
    with pytest.raises(ResultFileError, match="shard 1/3 appears twice"):
        check_shards([three[0], three[1], copy])
    # a record of shard 0 smuggled into shard 1
    stray = json.loads(three[0].read_text(encoding="utf-8").splitlines()[1])
    with three[1].open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(stray) + "\n")
    with pytest.raises(ResultFileError, match=f"example '{stray['id']}' is in both"):
        check_shards(three)


def test_a_shard_with_more_results_than_its_examples_is_refused(tmp_path: Path) -> None:
    paths = _shards(tmp_path / "run", 2, n=6)
    with paths[0].open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "result", "id": "extra", "score": 1.0}) + "\n")
    with pytest.raises(ResultFileError, match="holds 4 results but shard 0/2 of 6 examples has 3"):
        check_shards(paths)


def test_an_unsharded_result_file_is_never_replaced(tmp_path: Path) -> None:
    paths = _shards(tmp_path / "run", 2)
    plain = tmp_path / "run" / "results.jsonl"
    run_evaluation(_answer, _examples(), plain, config=_config(), progress=False)
    before = plain.read_bytes()
    with pytest.raises(ConfigurationError, match="not a merge of shards"):
        merge_shards(paths, plain)
    assert plain.read_bytes() == before
    with pytest.raises(ConfigurationError, match="one of the shard files"):
        merge_shards(paths, paths[0])


def test_shard_files_are_found_in_a_run_folder(tmp_path: Path) -> None:
    paths = _shards(tmp_path / "run", 3)
    assert find_shard_files(tmp_path / "run") == paths
    assert find_shard_files(tmp_path / "run" / "shards") == paths
    assert merge_inputs([tmp_path / "run"]) == (paths, tmp_path / "run" / "results.jsonl")
    assert merge_inputs([tmp_path / "run" / "shards"])[1] == tmp_path / "run" / "results.jsonl"
    assert merge_inputs(paths)[1] == (tmp_path / "run" / "results.jsonl").resolve()
    loose = tmp_path / "loose.jsonl"
    loose.write_bytes(paths[0].read_bytes())
    assert merge_inputs([loose]) == ([loose], None)
    _shards(tmp_path / "run", 2)
    with pytest.raises(ResultFileError, match=r"several splits \(2 of 2, 3 of 3\)"):
        find_shard_files(tmp_path / "run")
    with pytest.raises(ResultFileError, match="no shard files"):
        find_shard_files(tmp_path)
    with pytest.raises(ResultFileError, match="no such shard file"):
        merge_inputs([tmp_path / "nothing.jsonl"])
