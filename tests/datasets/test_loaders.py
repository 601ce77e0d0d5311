"""Every loader on the real files in ../shared/data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablereason.datasets import DATASETS, available_datasets, load_dataset

EXPECTED_COUNTS = {
    ("wikitq", "test"): 500,
    ("wikitq", "train"): 200,
    ("tabfact", "test"): 1219,
    ("tabmwp", "test"): 600,
    ("tabmwp", "dev1k"): 1000,
    ("scienceqa", "test"): 226,
    ("hotpotqa", "dev"): 200,
}


@pytest.mark.parametrize(("name", "split"), list(EXPECTED_COUNTS))
def test_counts_match_the_data_readmes(data_dir: Path, name: str, split: str) -> None:
    examples = load_dataset(name, split, data_dir=data_dir)
    assert len(examples) == EXPECTED_COUNTS[(name, split)]
    assert len({e.id for e in examples}) == len(examples), "ids must be unique"
    assert all(e.dataset == name and e.question for e in examples)


def test_every_dataset_names_its_defaults() -> None:
    methods = {
        "wikitq": "chain_of_table",
        "tabfact": "chain_of_table",
        "tabmwp": "chameleon",
        "scienceqa": "chameleon",
        "hotpotqa": "rewoo",
    }
    from tablereason.evaluate import METRICS

    for name, method in methods.items():
        spec = DATASETS.get(name)
        assert spec.default_method == method
        assert spec.default_metric in METRICS
        assert spec.default_split in spec.splits


def test_available_datasets_lists_local_splits(data_dir: Path) -> None:
    found = available_datasets(data_dir)
    assert found == {
        "wikitq": ["test", "train"],
        "tabfact": ["test"],
        "tabmwp": ["test", "dev1k"],
        "scienceqa": ["test"],
        "hotpotqa": ["dev"],
    }


def test_limit_keeps_file_order(data_dir: Path) -> None:
    everything = load_dataset("tabmwp", "test", data_dir=data_dir)
    first = load_dataset("tabmwp", "test", data_dir=data_dir, limit=5)
    assert [e.id for e in first] == [e.id for e in everything[:5]]
    raw = json.loads((data_dir / "tabmwp" / "problems_test.json").read_text(encoding="utf-8"))
    assert [e.id for e in first] == list(raw)[:5]


def test_wikitq_fields_and_table(data_dir: Path) -> None:
    examples = load_dataset("wikitq", "test", data_dir=data_dir)
    first = examples[0]
    assert first.id == "nu-3"
    assert first.answer == ["January 26, 1995"]
    assert first.metadata["target_canon"] == ["1995-01-26"]
    assert first.metadata["target_canon_type"] == "date"
    multi = next(e for e in examples if e.id == "nu-460")
    assert multi.answer == ["Japan (JPN)", "South Korea (KOR)"]
    table = first.table
    assert table is not None
    assert table.columns[:2] == ["Series #", "Season #"]
    page = json.loads((data_dir / "wikitq" / "page" / "204-page" / "803.json").read_text())
    assert table.caption == page["title"]
    assert first.table is table, "the table is built once and cached"
    train = load_dataset("wikitq", "train", data_dir=data_dir)
    assert all(e.metadata["target_canon"] is None for e in train), "train has no tagged file"


def test_tabfact_fields_and_table(data_dir: Path) -> None:
    examples = load_dataset("tabfact", "test", data_dir=data_dir)
    lines = (data_dir / "tabfact" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    raw = json.loads(lines[0])
    first = examples[0]
    assert first.question == raw["statement"]
    assert first.answer == ("yes" if raw["label"] == 1 else "no")
    assert first.metadata["label"] == raw["label"]
    assert first.table is not None
    assert first.table.to_records() == raw["table_text"]
    assert first.table.caption == raw["table_caption"]
    labels = [e.metadata["label"] for e in examples]
    assert (labels.count(1), labels.count(0)) == (603, 616)
    # raw2clean: mapped statements carry the cleaned text, the rest fall back to the raw one
    clean = {}
    for line in (data_dir / "tabfact" / "raw2clean.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        clean[record["statement"]] = record["cleaned_statement"]
    for e in examples:
        assert e.metadata["cleaned_statement"] == clean.get(e.question, e.question)
    assert sum(e.question in clean for e in examples) == 1166
    # duplicated (table, statement) pairs still get distinct ids
    assert sum("#" in e.id for e in examples) == 3


def test_tabmwp_fields_and_table(data_dir: Path) -> None:
    examples = load_dataset("tabmwp", "test", data_dir=data_dir)
    raw = json.loads((data_dir / "tabmwp" / "problems_test.json").read_text(encoding="utf-8"))
    for example in examples[:50]:
        record = raw[example.id]
        assert example.answer == record["answer"]
        assert example.choices == record["choices"]
        assert example.metadata["unit"] == record["unit"]
        assert example.metadata["ans_type"] == record["ans_type"]
        assert example.metadata["grade"] == record["grade"]
        assert example.table_source is not None
        assert example.table_source.header == list(record["table_for_pd"])
    first = examples[0]
    assert first.table is not None
    assert first.table.columns == list(raw[first.id]["table_for_pd"])
    assert first.table.num_rows == len(next(iter(raw[first.id]["table_for_pd"].values())))
    assert first.table.caption == raw[first.id]["table_title"]
    kinds = [e.metadata["ques_type"] for e in examples]
    assert (kinds.count("free_text"), kinds.count("multi_choice")) == (454, 146)


def test_scienceqa_fields(data_dir: Path) -> None:
    examples = load_dataset("scienceqa", "test", data_dir=data_dir)
    raw = json.loads((data_dir / "scienceqa" / "problems.json").read_text(encoding="utf-8"))
    captions = json.loads((data_dir / "scienceqa" / "captions.json").read_text())["captions"]
    for example in examples:
        record = raw[example.id]
        assert example.answer == record["choices"][record["answer"]]
        assert example.context == record["hint"]
        assert example.metadata["caption"] == captions.get(example.id, "")
    with_image = [e for e in examples if e.metadata["image"]]
    assert len(with_image) == 105
    assert all(Path(e.metadata["image_file"]).is_file() for e in with_image)
    assert all(e.metadata["ocr"].startswith("[") for e in with_image)
    assert all(e.table is None for e in examples)
    subjects = [e.metadata["subject"] for e in examples]
    assert subjects.count("natural science") == 110


def test_hotpotqa_fields(data_dir: Path) -> None:
    examples = load_dataset("hotpotqa", "dev", data_dir=data_dir)
    first = examples[0]
    assert first.answer == "Chief of Protocol"
    assert all(len(e.passages) == 10 for e in examples)
    assert all(sum(p.is_supporting for p in e.passages) == 2 for e in examples)
    types = [e.metadata["type"] for e in examples]
    assert (types.count("bridge"), types.count("comparison")) == (160, 40)


def test_env_variable_and_dataset_folder_as_data_dir(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABLEREASON_DATA_DIR", str(data_dir))
    assert len(load_dataset("hotpotqa", limit=3)) == 3
    monkeypatch.delenv("TABLEREASON_DATA_DIR")
    assert len(load_dataset("hotpotqa", data_dir=data_dir / "hotpotqa", limit=2)) == 2
