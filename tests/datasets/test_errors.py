"""Missing and malformed files give errors that name the file and say what to do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tablereason.datasets import DatasetFileError, load_dataset
from tablereason.errors import ConfigurationError, DatasetError, UnknownNameError


def test_no_data_dir_and_no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABLEREASON_DATA_DIR", raising=False)
    with pytest.raises(DatasetError, match="TABLEREASON_DATA_DIR") as info:
        load_dataset("wikitq")
    assert "download" in str(info.value)


def test_data_dir_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset("wikitq", data_dir=tmp_path / "nope")


def test_dataset_folder_missing(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"dataset 'tabmwp' not found.*tabmwp") as info:
        load_dataset("tabmwp", data_dir=tmp_path)
    assert "download('tabmwp'" in str(info.value)


def test_split_file_missing(tmp_path: Path) -> None:
    (tmp_path / "tabmwp").mkdir()
    with pytest.raises(DatasetError, match=r"problems_dev1k\.json"):
        load_dataset("tabmwp", "dev1k", data_dir=tmp_path)


def test_unknown_dataset_and_split(fixture_data: Path) -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'wikitq'"):
        load_dataset("wikitqa", data_dir=fixture_data)
    with pytest.raises(ConfigurationError, match="available splits"):
        load_dataset("hotpotqa", "validation", data_dir=fixture_data)
    with pytest.raises(ConfigurationError, match="limit"):
        load_dataset("hotpotqa", data_dir=fixture_data, limit=-1)


def test_truncated_json(tmp_path: Path, fixture_data: Path) -> None:
    folder = tmp_path / "tabmwp"
    folder.mkdir()
    text = (fixture_data / "tabmwp" / "problems_test.json").read_text(encoding="utf-8")
    (folder / "problems_test.json").write_text(text[:5000], encoding="utf-8")
    with pytest.raises(DatasetFileError, match=r"problems_test.json.*not valid JSON"):
        load_dataset("tabmwp", data_dir=tmp_path)


def test_missing_field(tmp_path: Path, fixture_data: Path) -> None:
    folder = tmp_path / "tabmwp"
    folder.mkdir()
    raw = json.loads((fixture_data / "tabmwp" / "problems_test.json").read_text(encoding="utf-8"))
    pid = next(iter(raw))
    del raw[pid]["ans_type"]
    (folder / "problems_test.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(DatasetFileError, match=rf"problem {pid}: missing field\(s\) ans_type"):
        load_dataset("tabmwp", data_dir=tmp_path)


def test_bad_jsonl_line_is_named(tmp_path: Path, fixture_data: Path) -> None:
    folder = tmp_path / "hotpotqa"
    folder.mkdir()
    lines = (fixture_data / "hotpotqa" / "dev_distractor.jsonl").read_text().splitlines()[:3]
    lines[1] = lines[1][:100]
    (folder / "dev_distractor.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetFileError, match="line 2 is not valid JSON"):
        load_dataset("hotpotqa", data_dir=tmp_path)


def test_tabfact_bad_label(tmp_path: Path, fixture_data: Path) -> None:
    folder = tmp_path / "tabfact"
    folder.mkdir()
    record = json.loads((fixture_data / "tabfact" / "test.jsonl").read_text().splitlines()[0])
    record["label"] = "entailed"
    (folder / "test.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(DatasetFileError, match="label must be 0 or 1"):
        load_dataset("tabfact", data_dir=tmp_path)


def test_tabfact_official_ragged_table(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "datasets" / "tabfact_official"
    folder = tmp_path / "tabfact"
    shutil.copytree(fixture, folder)
    table = next((folder / "data" / "all_csv").iterdir())
    table.write_text(table.read_text() + "one#two\n")
    with pytest.raises(DatasetFileError, match=r"2 cells, header has"):
        load_dataset("tabfact", data_dir=tmp_path)


def test_wikitq_missing_table_and_bad_header(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "datasets" / "wikitq_release"
    folder = tmp_path / "wikitq"
    shutil.copytree(fixture, folder)
    shutil.rmtree(folder / "csv" / "203-csv")
    with pytest.raises(DatasetError, match=r"table .*203-csv/65.csv.* missing"):
        load_dataset("wikitq", data_dir=tmp_path)
    tsv = folder / "data" / "pristine-unseen-tables.tsv"
    tsv.write_text("id\tquestion\n1\tx\n")
    with pytest.raises(DatasetFileError, match="lacks column"):
        load_dataset("wikitq", data_dir=tmp_path)


def test_scienceqa_inconsistent_files(tmp_path: Path, fixture_data: Path) -> None:
    folder = tmp_path / "scienceqa"
    folder.mkdir()
    for name in ("problems.json", "captions.json", "ocrs.json"):
        shutil.copy(fixture_data / "scienceqa" / name, folder / name)
    (folder / "pid_splits.json").write_text(json.dumps({"test": ["999999"]}))
    with pytest.raises(DatasetFileError, match=r"problems\.json lacks it"):
        load_dataset("scienceqa", data_dir=tmp_path)
    (folder / "pid_splits.json").write_text(json.dumps({"val": []}))
    with pytest.raises(DatasetFileError, match="no split 'test'"):
        load_dataset("scienceqa", data_dir=tmp_path)
    (folder / "captions.json").unlink()
    (folder / "pid_splits.json").write_text(json.dumps({"test": []}))
    with pytest.raises(DatasetError, match=r"missing file .*captions\.json.*chameleon-llm"):
        load_dataset("scienceqa", data_dir=tmp_path)
