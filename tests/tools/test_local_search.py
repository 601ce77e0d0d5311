"""Local search: passages, leave-out, lazy building, and the ScienceQA lecture corpus."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tablereason.datasets import load_dataset
from tablereason.errors import DatasetError
from tablereason.tools import (
    CorpusText,
    LeaveOut,
    LocalCorpus,
    LocalSearch,
    folder_corpus,
    scienceqa_corpus,
)
from tablereason.tools.local_search import passages, word_overlap
from tablereason.tools.scienceqa_corpus import leave_out

MAGNETS = "Identify magnets that attract or repel"


def _lines(text: str) -> set[str]:
    return {" ".join(line.lower().split()) for line in text.splitlines() if line.strip()}


# ------------------------------------------------------------------ building blocks


def test_passages_keep_whole_lines() -> None:
    text = "alpha beta\ngamma\n\n" + "x" * 30 + "\ndelta"
    assert passages(text, max_chars=16) == ["alpha beta\ngamma", "x" * 30, "delta"]
    assert passages("  spaced   out \n\n") == ["spaced out"]


def test_word_overlap() -> None:
    assert word_overlap("A b c", "a B d") == pytest.approx(2 / 4)
    assert word_overlap("", "a") == 0.0


def test_identical_texts_are_merged() -> None:
    corpus = LocalCorpus([
        CorpusText(title="Food webs", text="A food web is a model.", skills=("Food webs",),
                   sources=("1",)),
        CorpusText(title="Food webs I", text="A  food web is a model.\n", skills=("Food webs I",),
                   sources=("2",)),
        CorpusText(title="Empty", text="  \n"),
    ])  # fmt: skip
    assert len(corpus) == 1
    (merged,) = corpus.texts
    assert merged.title == "Food webs; Food webs I"
    assert merged.skills == ("Food webs", "Food webs I") and merged.sources == ("1", "2")


def test_leave_out_hides_skill_own_text_near_copies_and_shared_lines() -> None:
    own = "Magnets have two poles.\nOpposite poles attract and like poles repel."
    corpus = LocalCorpus([
        CorpusText(title="a", text=own, skills=(MAGNETS,)),
        CorpusText(title="b", text=own.replace("two", "2"), skills=("Renamed skill",)),
        CorpusText(title="c", text="Magnets have two poles.\nMagnetic force gets weaker with "
                   "distance between the magnets, so far magnets barely pull.",
                   skills=("Compare magnetic forces",)),
        CorpusText(title="d", text="Plants make food from sunlight.", skills=("Plants",)),
    ])  # fmt: skip
    rule = LeaveOut(skill=MAGNETS, text=own)
    assert corpus.hidden(rule) == {0, 1}
    assert corpus.hidden(LeaveOut(skill=MAGNETS)) == {0}
    assert corpus.hidden(None) == set()
    hits = corpus.search("magnets poles", k=3, leave_out=rule)
    assert [h.title for h in hits] == ["c"]
    assert "two poles" not in hits[0].text  # the shared line is cut
    assert hits[0].text.startswith("Magnetic force gets weaker")
    assert [h.title for h in corpus.search("magnets poles", k=3)] == ["a", "b", "c"]


def test_local_search_tool_is_lazy_and_reports_missing_data() -> None:
    calls: list[int] = []

    def build() -> LocalCorpus:
        calls.append(1)
        return LocalCorpus([CorpusText(title="Oslo", text="Oslo is the capital of Norway.")])

    tool = LocalSearch(build, k=2)
    assert calls == []  # nothing built until the first search
    assert tool("capital of norway") == "Oslo is the capital of Norway."
    assert tool("oslo") == "Oslo is the capital of Norway."
    assert calls == [1]
    assert tool("volcano") == "No evidence found: nothing in the local corpus matches 'volcano'"

    def missing() -> LocalCorpus:
        raise DatasetError("no ScienceQA problems.json under '/nowhere'")

    text = LocalSearch(missing)("anything")
    assert text.startswith("No evidence found: no local search corpus: no ScienceQA problems")


def test_folder_corpus_is_cached_until_a_file_changes(tmp_path: Path) -> None:
    (tmp_path / "Volcanoes.txt").write_text("Lava is molten rock.\n\nVolcanoes erupt.")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "Rivers.md").write_text("Rivers flow to the sea.")
    (tmp_path / "ignored.json").write_text("{}")
    first = folder_corpus(tmp_path)
    assert sorted(t.title for t in first.texts) == ["Rivers", "Volcanoes"]
    assert folder_corpus(tmp_path) is first
    time.sleep(0.01)
    (tmp_path / "Glaciers.txt").write_text("Glaciers are slow rivers of ice.")
    second = folder_corpus(tmp_path)
    assert second is not first and len(second) == 3
    assert [h.title for h in second.search("rivers of ice", k=1)] == ["Glaciers"]
    with pytest.raises(DatasetError, match=r"no \*.txt or \*.md files"):
        folder_corpus(tmp_path / "missing")


# ------------------------------------------------------------------ ScienceQA lectures


def test_scienceqa_corpus_holds_the_distinct_lectures(each_data: Path) -> None:
    problems = json.loads((each_data / "scienceqa" / "problems.json").read_text())
    lectures = {" ".join(p["lecture"].split()) for p in problems.values() if p["lecture"].strip()}
    corpus = scienceqa_corpus(each_data)
    assert len(corpus) == len(lectures) == 93
    assert {" ".join(t.text.split()) for t in corpus.texts} == lectures
    assert "all problems" in corpus.description  # the developer copy has no train split
    assert scienceqa_corpus(each_data / "scienceqa") is corpus  # cached, either path form
    solutions = [p["solution"] for p in problems.values() if len(p["solution"]) > 80]
    text = "\n".join(t.text for t in corpus.texts)
    assert not any(s in text for s in solutions)  # lectures only, never a solution


def test_a_topic_query_returns_its_lecture(each_data: Path) -> None:
    corpus = scienceqa_corpus(each_data)
    hits = corpus.search("do these magnets attract or repel each other", k=3)
    assert hits and all(h.title == MAGNETS for h in hits)
    assert "magnets attract" in hits[0].text
    guide = corpus.search("guide words on a dictionary page", k=1)
    assert guide[0].title == "Use guide words"


def test_no_question_ever_reads_its_own_lecture(each_data: Path) -> None:
    corpus = scienceqa_corpus(each_data)
    examples = load_dataset("scienceqa", "test", data_dir=each_data)
    returned = 0
    for example in examples:
        md = example.metadata
        rule = leave_out(md["skill"], md["lecture"])
        own = _lines(md["lecture"])
        first_line = md["lecture"].splitlines()[0] if md["lecture"].strip() else md["skill"]
        for query in (example.question, first_line, md["skill"]):
            for hit in corpus.search(query, k=3, leave_out=rule):
                returned += 1
                assert md["skill"] not in corpus.texts[hit.source].skills
                assert not _lines(hit.text) & own, (example.id, query)
    # the leave-out still leaves most of the corpus searchable (measured: 0.88 hits per
    # query of at most 3 on the full data, 0.95 on the fixtures)
    assert returned > 0.7 * 3 * len(examples)


def test_magnet_question_reads_another_skills_lecture(each_data: Path) -> None:
    examples = {e.id: e for e in load_dataset("scienceqa", "test", data_dir=each_data)}
    md = examples["693"].metadata
    assert md["skill"] == MAGNETS
    hits = scienceqa_corpus(each_data).search(
        "magnets attract repel", k=3, leave_out=leave_out(md["skill"], md["lecture"])
    )
    assert hits and all(h.title != MAGNETS for h in hits)
    assert all("magnet" in h.text.lower() for h in hits)
    assert len({h.text for h in hits}) == len(hits)  # duplicate passages come back once


def test_scienceqa_corpus_prefers_the_train_split(tmp_path: Path) -> None:
    folder = tmp_path / "scienceqa"
    folder.mkdir()
    problems = {
        "1": {"lecture": "Rocks are made of minerals.", "skill": "Rocks", "split": "train"},
        "2": {"lecture": "Cells are the units of life.", "skill": "Cells", "split": "test"},
    }
    (folder / "problems.json").write_text(json.dumps(problems))
    (folder / "pid_splits.json").write_text(json.dumps({"train": ["1"], "test": ["2"]}))
    corpus = scienceqa_corpus(tmp_path)
    assert [t.title for t in corpus.texts] == ["Rocks"] and "split(s) train" in corpus.description
    both = scienceqa_corpus(tmp_path, splits=["train", "test"])
    assert sorted(t.title for t in both.texts) == ["Cells", "Rocks"]
    with pytest.raises(DatasetError, match="has no split 'val'"):
        scienceqa_corpus(tmp_path, splits=["val"])


def test_scienceqa_corpus_missing_folder_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"no ScienceQA problems\.json .* search_corpus"):
        scienceqa_corpus(tmp_path)


def test_first_search_is_quick(each_data: Path, tmp_path: Path) -> None:
    # A fresh copy of the folder is not cached yet: this times building plus one search.
    folder = tmp_path / "scienceqa"
    folder.mkdir()
    for name in ("problems.json", "pid_splits.json"):
        (folder / name).write_bytes((each_data / "scienceqa" / name).read_bytes())
    started = time.perf_counter()
    hits = LocalSearch(lambda: scienceqa_corpus(tmp_path))("food web")
    assert time.perf_counter() - started < 2.0
    assert "food web" in hits.lower()


def test_one_common_word_is_not_a_match(each_data: Path) -> None:
    corpus = scienceqa_corpus(each_data)
    # "capital" alone matches the chemistry lecture ("one capital letter"): not returned.
    assert corpus.search("capital city of Kentucky", k=3) == []
    assert "capital letter" in corpus.search("capital", k=1)[0].text
    loose = corpus.search("capital city of Kentucky", k=3, min_coverage=0.0)
    assert loose and "capital letter" in loose[0].text
