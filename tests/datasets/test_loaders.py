"""Every loader on real files: the committed fixtures, and the full data when present."""

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


def raw_count(data: Path, name: str, split: str) -> int:
    """How many records the split's file holds, counted without the loader."""
    folder = data / name
    if name == "wikitq":
        return len((folder / "data" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()) - 1
    if name in ("tabfact", "hotpotqa"):
        file = "test.jsonl" if name == "tabfact" else "dev_distractor.jsonl"
        return len((folder / file).read_text(encoding="utf-8").splitlines())
    if name == "tabmwp":
        return len(json.loads((folder / f"problems_{split}.json").read_text(encoding="utf-8")))
    return len(json.loads((folder / "pid_splits.json").read_text(encoding="utf-8"))[split])


@pytest.mark.parametrize(("name", "split"), list(EXPECTED_COUNTS))
def test_every_record_loads_once(each_data: Path, name: str, split: str) -> None:
    examples = load_dataset(name, split, data_dir=each_data)
    assert len(examples) == raw_count(each_data, name, split) > 0
    assert len({e.id for e in examples}) == len(examples), "ids must be unique"
    assert all(e.dataset == name and e.question for e in examples)


@pytest.mark.parametrize(("name", "split"), list(EXPECTED_COUNTS))
def test_counts_match_the_data_readmes(full_data: Path, name: str, split: str) -> None:
    assert len(load_dataset(name, split, data_dir=full_data)) == EXPECTED_COUNTS[(name, split)]


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


def test_available_datasets_lists_local_splits(each_data: Path) -> None:
    found = available_datasets(each_data)
    assert found == {
        "wikitq": ["test", "train"],
        "tabfact": ["test"],
        "tabmwp": ["test", "dev1k"],
        "scienceqa": ["test"],
        "hotpotqa": ["dev"],
    }


def test_limit_keeps_file_order(fixture_data: Path) -> None:
    everything = load_dataset("tabmwp", "test", data_dir=fixture_data)
    first = load_dataset("tabmwp", "test", data_dir=fixture_data, limit=5)
    assert [e.id for e in first] == [e.id for e in everything[:5]]
    raw = json.loads((fixture_data / "tabmwp" / "problems_test.json").read_text(encoding="utf-8"))
    assert [e.id for e in first] == list(raw)[:5]


def test_wikitq_fields_and_table(each_data: Path) -> None:
    examples = load_dataset("wikitq", "test", data_dir=each_data)
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
    page = json.loads((each_data / "wikitq" / "page" / "204-page" / "803.json").read_text())
    assert table.caption == page["title"]
    assert first.table is table, "the table is built once and cached"
    train = load_dataset("wikitq", "train", data_dir=each_data)
    assert all(e.metadata["target_canon"] is None for e in train), "train has no tagged file"


def test_tabfact_fields_and_table(each_data: Path) -> None:
    examples = load_dataset("tabfact", "test", data_dir=each_data)
    lines = (each_data / "tabfact" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    raw = json.loads(lines[0])
    first = examples[0]
    assert first.question == raw["statement"]
    assert first.answer == ("yes" if raw["label"] == 1 else "no")
    assert first.metadata["label"] == raw["label"]
    assert first.table is not None
    assert first.table.to_records() == raw["table_text"]
    assert first.table.caption == raw["table_caption"]
    labels = [json.loads(line)["label"] for line in lines]
    assert [e.metadata["label"] for e in examples] == labels
    assert [e.answer for e in examples] == ["yes" if label == 1 else "no" for label in labels]
    # raw2clean: mapped statements carry the cleaned text, the rest fall back to the raw one
    clean = {}
    raw2clean = each_data / "tabfact" / "raw2clean.jsonl"
    for line in raw2clean.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        clean[record["statement"]] = record["cleaned_statement"]
    for e in examples:
        assert e.metadata["cleaned_statement"] == clean.get(e.question, e.question)
    assert 0 < sum(e.question in clean for e in examples) < len(examples)  # both kinds occur
    # duplicated (table, statement) pairs still get distinct ids (all three are in the fixture)
    assert sum("#" in e.id for e in examples) == 3


def test_tabfact_counts_match_the_readme(full_data: Path) -> None:
    examples = load_dataset("tabfact", "test", data_dir=full_data)
    labels = [e.metadata["label"] for e in examples]
    assert (labels.count(1), labels.count(0)) == (603, 616)
    assert sum(e.metadata["cleaned_statement"] != e.question for e in examples) > 0
    clean = {
        json.loads(line)["statement"]
        for line in (full_data / "tabfact" / "raw2clean.jsonl").read_text().splitlines()
    }
    assert sum(e.question in clean for e in examples) == 1166


def test_tabmwp_fields_and_table(each_data: Path) -> None:
    examples = load_dataset("tabmwp", "test", data_dir=each_data)
    raw = json.loads((each_data / "tabmwp" / "problems_test.json").read_text(encoding="utf-8"))
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
    assert kinds == [raw[e.id]["ques_type"] for e in examples]
    assert {"free_text", "multi_choice"} <= set(kinds)


def test_tabmwp_counts_match_the_readme(full_data: Path) -> None:
    kinds = [e.metadata["ques_type"] for e in load_dataset("tabmwp", "test", data_dir=full_data)]
    assert (kinds.count("free_text"), kinds.count("multi_choice")) == (454, 146)


def test_scienceqa_fields(each_data: Path) -> None:
    examples = load_dataset("scienceqa", "test", data_dir=each_data)
    folder = each_data / "scienceqa"
    raw = json.loads((folder / "problems.json").read_text(encoding="utf-8"))
    captions = json.loads((folder / "captions.json").read_text())["captions"]
    for example in examples:
        record = raw[example.id]
        assert example.answer == record["choices"][record["answer"]]
        assert example.context == record["hint"]
        assert example.metadata["caption"] == captions.get(example.id, "")
    with_image = [e for e in examples if e.metadata["image"]]
    assert {e.id for e in with_image} == set(captions)
    for e in with_image:
        assert e.metadata["image_file"] == str(folder / "images" / "test" / e.id / "image.png")
    # the fixture ships only some images (see its README); the full data has all of them
    assert any(Path(e.metadata["image_file"]).is_file() for e in with_image)
    assert all(e.metadata["ocr"].startswith("[") for e in with_image)
    assert all(e.table is None for e in examples)


def test_scienceqa_counts_and_images(full_data: Path) -> None:
    examples = load_dataset("scienceqa", "test", data_dir=full_data)
    with_image = [e for e in examples if e.metadata["image"]]
    assert len(with_image) == 105
    assert all(Path(e.metadata["image_file"]).is_file() for e in with_image)
    subjects = [e.metadata["subject"] for e in examples]
    assert subjects.count("natural science") == 110


def test_hotpotqa_fields(each_data: Path) -> None:
    examples = load_dataset("hotpotqa", "dev", data_dir=each_data)
    first = examples[0]
    assert first.answer == "Chief of Protocol"
    assert all(len(e.passages) == 10 for e in examples)
    assert all(sum(p.is_supporting for p in e.passages) == 2 for e in examples)
    assert {e.metadata["type"] for e in examples} == {"bridge", "comparison"}


def test_hotpotqa_types_match_the_readme(full_data: Path) -> None:
    types = [e.metadata["type"] for e in load_dataset("hotpotqa", "dev", data_dir=full_data)]
    assert (types.count("bridge"), types.count("comparison")) == (160, 40)


def test_env_variable_and_dataset_folder_as_data_dir(
    fixture_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABLEREASON_DATA_DIR", str(fixture_data))
    assert len(load_dataset("hotpotqa", limit=3)) == 3
    monkeypatch.delenv("TABLEREASON_DATA_DIR")
    assert len(load_dataset("hotpotqa", data_dir=fixture_data / "hotpotqa", limit=2)) == 2
