"""`tablereason eval --shard` / `--shards` and `tablereason merge`, end to end on 127.0.0.1."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.scripted_server import ScriptedServer, wikitq_reply

from tablereason.cli import EXIT_INPUT, EXIT_OK, EXIT_USAGE, main
from tablereason.datasets import load_dataset
from tablereason.evaluate.results import read_results

LIMIT = 7
PROGRESS = re.compile(r"\[(\d+)/(\d+)\] acc +([\d.]+)% \| failed (\d+) \| tokens ([\d,]+)")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, fixture_data: Path) -> Iterator[ScriptedServer]:
    """First-cell answers, except the gold answer for every other question."""
    examples = load_dataset("wikitq", "test", data_dir=fixture_data, limit=LIMIT)
    gold = {e.question: e.answers for i, e in enumerate(examples) if i % 2 == 0}

    def reply(prompt: str) -> str:
        asked = re.findall(r"Question: (.*)", prompt)
        if prompt.rstrip().endswith("The answer is:") and asked and asked[-1] in gold:
            return " " + " | ".join(gold[asked[-1]])
        return wikitq_reply(prompt)

    with ScriptedServer(reply) as running:
        monkeypatch.setenv("OPENAI_BASE_URL", running.url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        yield running


def _eval(fixture_data: Path, out: Path, *extra: str) -> int:
    argv = ["eval", "--dataset", "wikitq", "--data-dir", str(fixture_data)]
    return main([*argv, "--limit", str(LIMIT), "--out", str(out), *extra])


def _score_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("wikitq_accuracy:"))


def _drop_last_line(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")


def test_merged_shards_score_as_the_unsharded_run(
    server, fixture_data: Path, tmp_path: Path, capsys
) -> None:
    plain, run = tmp_path / "plain", tmp_path / "run"
    assert _eval(fixture_data, plain, "--quiet") == EXIT_OK
    assert main(["report", str(plain)]) == EXIT_OK
    expected = _score_line(capsys.readouterr().out)
    assert "wikitq_accuracy: 0.00%" not in expected and "100.00%" not in expected

    for i in range(3):
        assert _eval(fixture_data, run, "--shard", f"{i}/3", "--quiet") == EXIT_OK
    assert not (run / "results.jsonl").exists()
    capsys.readouterr()
    assert main(["merge", str(run)]) == EXIT_OK
    printed = capsys.readouterr().out
    assert f"merged 3 of 3 shards ({LIMIT} results) into {run / 'results.jsonl'}" in printed
    assert _score_line(printed) == expected
    assert f"report:  tablereason report {run}" in printed

    assert main(["report", str(run)]) == EXIT_OK
    assert _score_line(capsys.readouterr().out) == expected
    assert (run / "report.html").is_file()
    _, merged, _ = read_results(run / "results.jsonl")
    _, whole, _ = read_results(plain / "results.jsonl")
    assert sorted((r["id"], str(r["answer"])) for r in merged) == sorted(
        (r["id"], str(r["answer"])) for r in whole
    )

    # the same, from the shard files themselves into a file of one's choosing
    files = sorted(str(p) for p in (run / "shards").glob("*.jsonl"))
    target = tmp_path / "merged.jsonl"
    assert main(["merge", *files, "--out", str(target)]) == EXIT_OK
    assert _score_line(capsys.readouterr().out) == expected
    loose = tmp_path / "loose"
    loose.mkdir()
    copies = [shutil.copy(f, loose) for f in files]
    assert main(["merge", *copies]) == EXIT_USAGE
    assert "--out" in capsys.readouterr().err


def test_shards_of_another_configuration_are_refused(
    server, fixture_data: Path, tmp_path: Path, capsys
) -> None:
    run, other = tmp_path / "run", tmp_path / "other"
    for i in (0, 2):
        assert _eval(fixture_data, run, "--shard", f"{i}/3", "--quiet") == EXIT_OK
    assert _eval(fixture_data, other, "--shard", "1/3", "--model", "other-model", "--quiet") == 0
    shutil.copy(other / "shards" / "results-1-of-3.jsonl", run / "shards")
    capsys.readouterr()
    assert main(["merge", str(run)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "results-1-of-3.jsonl is from a different run than" in err
    assert "model ('openai:fake-model' vs 'openai:other-model')" in err
    assert not (run / "results.jsonl").exists()
    assert main(["merge", str(run), "--allow-partial"]) == EXIT_INPUT  # never mixes runs


def test_missing_and_incomplete_shards_are_reported(
    server, fixture_data: Path, tmp_path: Path, capsys
) -> None:
    run = tmp_path / "run"
    for i in (0, 1, 3):
        assert _eval(fixture_data, run, "--shard", f"{i}/4", "--quiet") == EXIT_OK
    _drop_last_line(run / "shards" / "results-1-of-4.jsonl")
    capsys.readouterr()
    assert main(["merge", str(run)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "shard 1/4 is incomplete: 1 of 2 results" in err
    assert f"shard 2/4 is missing (no {run / 'shards' / 'results-2-of-4.jsonl'})" in err
    assert "--allow-partial" in err
    assert not (run / "results.jsonl").exists()

    assert main(["merge", str(run), "--allow-partial"]) == EXIT_OK
    captured = capsys.readouterr()
    assert "warning: partial merge: shard 1/4 is incomplete" in captured.err
    assert "merged 3 of 4 shards (4 results)" in captured.out
    assert f"of {LIMIT}; 4 run, 0 failed)" in _score_line(captured.out)

    # finishing the shards (each rerun resumes) makes a complete merge
    for i in (1, 2):
        assert _eval(fixture_data, run, "--shard", f"{i}/4", "--quiet") == EXIT_OK
    capsys.readouterr()
    assert main(["merge", str(run)]) == EXIT_OK
    assert f"merged 4 of 4 shards ({LIMIT} results)" in capsys.readouterr().out


@pytest.mark.parametrize("quiet", [False, True])
def test_parallel_shards_show_one_progress_line(
    server, fixture_data: Path, tmp_path: Path, capsys, quiet: bool
) -> None:
    run = tmp_path / "run"
    flags = ["--shards", "3", "--executor", "threads", *(["--quiet"] if quiet else [])]
    assert _eval(fixture_data, run, *flags) == EXIT_OK
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if PROGRESS.match(line)]
    if quiet:
        assert lines == []
        return
    match = PROGRESS.match(lines[-1])
    assert match is not None
    done, total, accuracy, failed, tokens = match.groups()
    assert (done, total, failed) == (str(LIMIT), str(LIMIT), "0")
    score = re.search(r"wikitq_accuracy ([\d.]+)%", captured.out)
    assert score is not None and accuracy == f"{float(score.group(1)):.1f}"
    printed_tokens = re.search(r"· ([\d,]+) tokens", captured.out)
    assert printed_tokens is not None and tokens == printed_tokens.group(1)
