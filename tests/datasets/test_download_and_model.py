"""The explicit download helper (no network: a fake fetcher) and the Example model."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tablereason.datasets import Example, TableSource, download, load_dataset
from tablereason.datasets.download import SOURCES
from tablereason.errors import UnknownNameError

REPO = Path(__file__).resolve().parents[2]


def test_every_dataset_has_download_sources() -> None:
    from tablereason.datasets import DATASETS

    assert set(SOURCES) == set(DATASETS.names())
    assert all(s.url.startswith(("https://", "http://")) for v in SOURCES.values() for s in v)


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    targets = download("scienceqa", tmp_path, dry_run=True)
    assert [t.name for t in targets] == [
        "problems.json",
        "pid_splits.json",
        "captions.json",
        "ocrs.json",
    ]
    assert not (tmp_path / "scienceqa").exists()
    with pytest.raises(UnknownNameError):
        download("wikitbq", tmp_path, dry_run=True)


def test_download_with_a_fake_fetcher_then_load(tmp_path: Path, fixture_data: Path) -> None:
    source = fixture_data / "tabfact"
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(source / "test.jsonl", "data/tabfact/test.jsonl")
        zf.write(source / "raw2clean.jsonl", "data/tabfact/raw2clean.jsonl")
        zf.writestr("data/other/ignored.txt", "x")
    calls: list[str] = []

    def fetch(url: str, dest: Path) -> None:
        calls.append(url)
        dest.write_bytes(archive.read_bytes())

    root = tmp_path / "root"
    download("tabfact", root, fetch=fetch)
    assert calls == [SOURCES["tabfact"][0].url]
    assert sorted(p.name for p in (root / "tabfact").iterdir()) == ["raw2clean.jsonl", "test.jsonl"]
    statements = (source / "test.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(load_dataset("tabfact", data_dir=root)) == len(statements)


def test_download_skips_existing_files_unless_forced(tmp_path: Path) -> None:
    calls: list[str] = []

    def fetch(url: str, dest: Path) -> None:
        calls.append(url)
        dest.write_text("{}")

    download("hotpotqa", tmp_path, fetch=fetch)
    download("hotpotqa", tmp_path, fetch=fetch)
    assert len(calls) == 1
    download("hotpotqa", tmp_path, fetch=fetch, force=True)
    assert len(calls) == 2
    assert not list((tmp_path / "hotpotqa").glob("*.part"))


def test_import_is_light() -> None:
    code = (
        "import sys, tablereason.datasets, tablereason.evaluate; "
        "print(sorted(m for m in ('duckdb', 'pandas', 'tablereason.table') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_example_model_round_trips_through_json() -> None:
    example = Example(
        dataset="tabfact",
        id="x",
        question="q",
        answer="yes",
        table_source=TableSource(header=["a", "b"], rows=[["1", "2"]], caption="c"),
        metadata={"label": 1},
    )
    again = Example.model_validate(json.loads(example.model_dump_json()))
    assert again == example
    assert again.table is not None and again.table.to_records() == [["a", "b"], ["1", "2"]]
    assert again.answers == ["yes"]


def test_example_from_table_keeps_the_table() -> None:
    from tablereason.table import Table

    table = Table.from_records(["city", "pop"], [["Oslo", "700"]], caption="cities")
    example = Example.from_table(table, "largest city?", answer="Oslo")
    assert example.table is table and example.has_table
    # the live table is held, not copied into rows: the example has no source to rebuild
    assert example.table_source is None
    assert example == Example.from_table(table, "largest city?", answer="Oslo")
    assert example != Example.from_table(table.sort_by("pop"), "largest city?", answer="Oslo")


def test_datasets_import_only_table_errors_and_registry() -> None:
    import ast

    allowed = (
        "tablereason.datasets",
        "tablereason.table",
        "tablereason.errors",
        "tablereason.registry",
    )
    package = REPO / "tablereason" / "datasets"
    for module in package.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("tablereason"):
                    assert name.startswith(allowed), f"{module.name} imports {name}"
