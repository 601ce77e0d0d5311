"""Loaders on the other official layouts, using the small fixtures cut from the real data."""

from __future__ import annotations

import json
from pathlib import Path

from tablereason.datasets import load_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"


def test_wikitq_release_layout_with_escapes() -> None:
    examples = load_dataset("wikitq", "test", data_dir=FIXTURES / "wikitq_release")
    assert [e.id for e in examples] == ["nu-136", "nu-170", "nu-1198", "nu-fixture-1"]
    escaped = examples[-1]
    assert escaped.question == "which cell has a pipe | or a backslash \\ or a\nnewline?"
    assert escaped.answer == ["a|b", "c\\d"]
    assert escaped.metadata["target_canon"] == ["a|b", "c\\d"]
    number = examples[2]
    assert number.metadata["target_canon"] == ["2.0"]
    assert number.metadata["target_canon_type"] == "number"
    assert examples[0].table is not None and examples[0].table.num_rows > 0


def test_wikitq_release_matches_the_shared_copy(fixture_data: Path) -> None:
    shared = {e.id: e for e in load_dataset("wikitq", "test", data_dir=fixture_data)}
    for example in load_dataset("wikitq", "test", data_dir=FIXTURES / "wikitq_release")[:3]:
        other = shared[example.id]
        assert (example.question, example.answer) == (other.question, other.answer)
        assert example.metadata["target_canon"] == other.metadata["target_canon"]
        assert example.table.equals(other.table)


def test_tabfact_official_layout(fixture_data: Path) -> None:
    folder = FIXTURES / "tabfact_official"
    official = load_dataset("tabfact", "test", data_dir=folder)
    jsonl = load_dataset("tabfact", "test", data_dir=fixture_data)
    data = json.loads((folder / "tokenized_data" / "test_examples.json").read_text())
    assert len(official) == sum(len(v[0]) for v in data.values())
    by_id = {e.id: e for e in jsonl}
    for example in official:
        twin = by_id[example.id]  # same statement and table: same id in both layouts
        assert example.answer == twin.answer
        assert example.table_source.header == twin.table_source.header
        assert example.table_source.rows == twin.table_source.rows
        assert example.table_source.caption == twin.table_source.caption
    small = load_dataset("tabfact", "small_test", data_dir=folder)
    wanted = json.loads((folder / "data" / "small_test_id.json").read_text())
    assert {e.metadata["table_id"] for e in small} == set(wanted)
    assert 0 < len(small) < len(official)


def test_hotpotqa_official_layout(fixture_data: Path) -> None:
    official = load_dataset("hotpotqa", "dev", data_dir=FIXTURES / "hotpotqa_official")
    ircot = load_dataset("hotpotqa", "dev", data_dir=fixture_data, limit=2)
    for a, b in zip(official, ircot, strict=True):
        assert (a.id, a.question, a.answer) == (b.id, b.question, b.answer)
        assert [p.text for p in a.passages] == [p.text for p in b.passages]
        assert [p.is_supporting for p in a.passages] == [p.is_supporting for p in b.passages]
        assert a.metadata["level"] == "medium"
        assert a.passages[0].sentences
