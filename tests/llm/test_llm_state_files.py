"""Prefix states kept on disk: a new process starts warm and answers as a fresh evaluation;
a file cut short, damaged, of another model or settings, or left half-written is ignored;
the folder stays within its budget; a folder that cannot be written costs only the files.

The embedded model runs on the batch-aware stand-in (its replies change whenever a prompt's
tokens were evaluated in other batches); the real model's case is in
``test_llm_prefix_exact.py`` (slow)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_llm_prefix_reuse import QUESTIONS, ask

from tablereason.llm import LocalLlama
from tablereason.llm.backends.state_files import MAGIC, SUFFIX, StateFolder

KINDS = ("plan-tabfact", "answer")


@pytest.fixture
def model(stand_in_model: Path) -> Path:
    return stand_in_model


def process(model: Path, folder: Path, **options: object) -> LocalLlama:
    """A model as a new process makes it: nothing in memory, the folder on disk."""
    settings = {"n_ctx": 256, "n_threads": 1, "n_batch": 4, **options}
    return LocalLlama(model, state_dir=folder, **settings)  # type: ignore[arg-type]


def fresh(model: Path) -> LocalLlama:
    return LocalLlama(model, n_ctx=256, n_threads=1, n_batch=4, reuse=False)


def warm_up(model: Path, folder: Path) -> None:
    """A first process that saves one state per kind to the folder."""
    first = process(model, folder)
    for question in QUESTIONS[:2]:
        for kind in KINDS:
            ask(first, kind, question)
    assert first.prefixes is not None and first.prefixes.stats().written == 2


def state_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{SUFFIX}"))


def test_a_new_process_restores_the_states_on_disk(model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "states"
    warm_up(model, folder)
    assert len(state_files(folder)) == 2
    second = process(model, folder)
    baseline = fresh(model)
    for kind in KINDS:
        assert ask(second, kind, QUESTIONS[2]) == ask(baseline, kind, QUESTIONS[2])
    stats, store = second.reuse_stats(), second.prefixes
    assert store is not None and store.stats().loaded == 2 and store.stats().written == 0
    assert stats.from_states == 2 and stats.tokens_evaluated < stats.tokens_sent / 2


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(QUESTIONS)), max_size=6),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([1, 3, 4]),
    st.sampled_from([0, 600, 10**6]),
)
def test_processes_sharing_a_folder_answer_as_fresh_evaluations(
    model: Path, tmp_path_factory: pytest.TempPathFactory, runs: list, n_batch: int, disk: int
) -> None:
    """Any sequence of processes, each asking anything, within any disk budget."""
    folder = tmp_path_factory.mktemp("states")
    baseline = LocalLlama(model, n_ctx=256, n_threads=1, n_batch=n_batch, reuse=False)
    for asked in runs:
        llm = process(model, folder, n_batch=n_batch, state_dir_mb=disk / 1e6)
        for kind, question in asked:
            assert ask(llm, kind, question) == ask(baseline, kind, question)
        assert sum(f.stat().st_size for f in state_files(folder)) <= disk


def _damaged(data: bytes, how: str, at: int) -> bytes:
    if how == "cut":
        return data[: at % len(data)]
    if how == "flip":
        i = at % len(data)
        return data[:i] + bytes([data[i] ^ 0x5A]) + data[i + 1 :]
    if how == "garbage":
        return bytes(range(256)) * (1 + at % 3)
    if how == "magic":
        return b"another format\n" + data[len(MAGIC) :]
    if how == "header":
        return MAGIC + b"{not json\n" + data[len(MAGIC) :]
    return b""  # empty


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.sampled_from(["cut", "flip", "garbage", "magic", "header", "empty"]),
    st.integers(0, 10**6),
)
def test_a_damaged_file_is_ignored(
    model: Path, tmp_path_factory: pytest.TempPathFactory, how: str, at: int
) -> None:
    """Cut short anywhere, a byte changed anywhere, not a state file: a miss, never an error."""
    folder = tmp_path_factory.mktemp("states")
    warm_up(model, folder)
    for file in state_files(folder):
        file.write_bytes(_damaged(file.read_bytes(), how, at))
    second = process(model, folder)
    for kind in KINDS:
        assert ask(second, kind, QUESTIONS[2]) == ask(fresh(model), kind, QUESTIONS[2])
    assert second.prefixes is not None and second.prefixes.stats().loaded == 0
    assert second.reuse_stats().from_states == 0


@pytest.mark.parametrize("change", ["settings", "model file"])
def test_states_of_another_model_or_settings_are_not_restored(
    model: Path, tmp_path: Path, change: str
) -> None:
    folder = tmp_path / "states"
    warm_up(model, folder)
    if change == "model file":
        model.write_bytes(b"GGUF and a new version")
        second = process(model, folder)
    else:
        second = process(model, folder, n_ctx=512)
    assert ask(second, KINDS[0], QUESTIONS[2]) == ask(fresh(model), KINDS[0], QUESTIONS[2])
    assert second.reuse_stats().from_states == 0


def test_a_half_written_file_is_never_read(model: Path, tmp_path: Path) -> None:
    """Files are written beside their place and renamed into it: a writer that stopped
    midway leaves a partial file no reader lists."""
    folder = tmp_path / "states"
    warm_up(model, folder)
    whole = state_files(folder)[0].read_bytes()
    for file in state_files(folder):
        file.unlink()
    (folder / ".partial-abc").write_bytes(whole[: len(whole) // 2])
    second = process(model, folder)
    assert ask(second, KINDS[0], QUESTIONS[2]) == ask(fresh(model), KINDS[0], QUESTIONS[2])
    assert second.reuse_stats().from_states == 0


def test_the_folder_keeps_within_its_budget_oldest_first(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path, "k", budget_bytes=1_000)
    for i in range(10):
        assert folder.save((i, i + 1), bytes(300))
    files = state_files(tmp_path)
    assert sum(f.stat().st_size for f in files) <= 1_000 and len(files) >= 2
    assert folder.load((9, 10)) == bytes(300)  # the newest stays
    assert folder.load((0, 1)) is None  # the oldest went first
    assert not folder.save((1,), bytes(2_000))  # larger than the whole budget


def test_a_folder_that_cannot_be_written_costs_only_the_files(
    model: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    llm = process(model, blocked)
    with caplog.at_level(logging.WARNING):
        for question in QUESTIONS[:3]:
            for kind in KINDS:
                assert ask(llm, kind, question) == ask(fresh(model), kind, question)
    assert llm.reuse_stats().from_states >= 2  # the states in memory still serve
    assert llm.prefixes is not None and llm.prefixes.stats().written == 0
    assert "not written" in caplog.text


def test_a_file_removed_after_it_was_listed_is_a_miss(model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "states"
    warm_up(model, folder)
    second = process(model, folder)
    ask(second, KINDS[1], QUESTIONS[3])  # lists the folder
    for file in state_files(folder):
        file.unlink()
    assert ask(second, KINDS[0], QUESTIONS[2]) == ask(fresh(model), KINDS[0], QUESTIONS[2])
    assert second.prefixes is not None and second.prefixes.stats().loaded == 1
