"""Discoverability: `methods` lists what each method takes (read from the code), a bad
`--option` names the valid keys, and the data commands speak the command line's words."""

from __future__ import annotations

import functools
import http.server
import shutil
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.taymyr import EXAMPLE, REPO

from tablereason.cli import EXIT_INPUT, EXIT_OK, EXIT_USAGE, main
from tablereason.cli.method_catalog import describe
from tablereason.datasets import DATA_DIR_ENV
from tablereason.datasets.download import Source
from tablereason.methods import METHODS
from tablereason.methods.chain_of_table.settings import PROFILES, ChainOfTableSettings

FIXTURES = REPO / "tests" / "fixtures" / "data"


def test_methods_lists_every_method_with_its_tasks_profiles_and_options(capsys) -> None:
    assert main(["methods"]) == EXIT_OK
    out = capsys.readouterr().out
    entries = {block.split(":")[0]: block for block in out.split("\n\n")}
    assert set(METHODS.names()) <= set(entries)
    cot = entries["chain_of_table"]
    assert "tasks (--task): tabfact, wikitq" in cot
    assert "profiles (--profile): efficient (the default), paper" in cot
    paper = PROFILES.get("paper")
    for name, field in ChainOfTableSettings.model_fields.items():  # every field, its default
        if name == "profile":
            continue
        default = ChainOfTableSettings().model_dump(mode="json")[name]
        shown = f"{name}={'null' if default is None else str(default).lower()}"
        assert shown in cot.replace("\n      ", " "), name
        if getattr(paper, name) != field.default:
            assert f"{shown} (paper: " in cot.replace("\n      ", " "), name
    assert "tasks (--task): none: any table and question" in entries["text_to_sql"]
    assert "hotpotqa (reads its files from --data-dir)" in entries["rewoo"]
    assert "tasks (--task): scienceqa, tabmwp" in entries["chameleon"]


def test_methods_name_describes_each_option(capsys) -> None:
    assert main(["methods", "chain_of_table"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "    select_samples (int) = 1" in out
    assert "Completions sampled for row and column selection. Other profiles: paper: 8." in out
    assert "    large_table_rows (int or null) = 1000" in out
    assert main(["methods", "chain_of_tabel"]) == EXIT_USAGE
    assert "did you mean 'chain_of_table'" in capsys.readouterr().err


def test_the_description_follows_the_code_not_a_list(monkeypatch) -> None:
    """A new settings field shows up in `methods` and is accepted by --option."""
    from pydantic import create_model

    wider = create_model("Wider", __base__=ChainOfTableSettings, new_knob=(int, 7))
    monkeypatch.setattr("tablereason.methods.chain_of_table.method.ChainOfTableSettings", wider)
    option = describe("chain_of_table").option("new_knob")
    assert option is not None and option.default == 7


@pytest.mark.parametrize("method", METHODS.names())
def test_an_unknown_option_names_the_valid_keys_for_every_method(method, capsys) -> None:
    argv = ["ask", str(EXAMPLE), "q?", "--method", method, "--option", "nosuch=1",
            "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]  # fmt: skip
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    keys = [o.name for o in describe(method).options]
    assert f"{method} has no option 'nosuch'" in err
    assert all(key in err for key in keys)
    assert f"tablereason methods {method}" in err
    assert "http" not in err.replace("http://127.0.0.1:9/v1", "") and "pydantic" not in err


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("select_samples=0", "select_samples=0 is not valid: Input should be greater than"),
        ("select_samples=many", "select_samples='many' is not valid"),
        ("seed=[1]", "seed=[1] is not valid"),
        ("sample_view=perhaps", "sample_view='perhaps' is not valid"),
    ],
)
def test_a_bad_option_value_is_a_sentence_not_pydantic_text(option, says, capsys) -> None:
    assert main(["ask", str(EXAMPLE), "q?", "--option", option]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert says in err and "https://" not in err and "errors.pydantic.dev" not in err


def test_datasets_without_data_speaks_command_line_words(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    for argv in (["datasets"], ["datasets", "--data-dir", str(tmp_path / "none")]):
        assert main(argv) == EXIT_INPUT
        err = capsys.readouterr().err
        assert "--data-dir" in err and "tablereason download NAME" in err
        assert "data_dir=" not in err and "tablereason.datasets" not in err
    missing = ["eval", "--dataset", "hotpotqa", "--data-dir", str(tmp_path), "--out", "x"]
    assert main(missing) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "tablereason download hotpotqa --data-dir DIR" in err, err
    assert "tablereason.datasets" not in err and "data_dir" not in err


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch) -> Iterator[str]:
    """A local HTTP server with the datasets' files; SOURCES point at it (no network)."""
    root = tmp_path / "mirror"
    root.mkdir()
    shutil.copy(FIXTURES / "tabmwp" / "problems_test.json", root / "problems_test1k.json")
    shutil.copy(FIXTURES / "tabmwp" / "problems_dev1k.json", root / "problems_dev1k.json")
    with zipfile.ZipFile(root / "wikitq.zip", "w") as archive:
        for path in (FIXTURES / "wikitq").rglob("*"):
            if path.is_file():
                name = "WikiTableQuestions/" + path.relative_to(FIXTURES / "wikitq").as_posix()
                archive.write(path, name)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    quick = {"poll_interval": 0.02}  # shutdown() waits for the next poll
    serve = threading.Thread(target=server.serve_forever, kwargs=quick, daemon=True)
    serve.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    downloads = sys.modules["tablereason.datasets.download"]  # the module, not the function
    monkeypatch.setattr(downloads, "SOURCES", {
        "tabmwp": (Source(f"{url}/problems_test1k.json", "problems_test1k.json"),
                   Source(f"{url}/problems_dev1k.json", "problems_dev1k.json")),
        "wikitq": (Source(f"{url}/wikitq.zip", ".", unzip_member="WikiTableQuestions/"),),
        "tabfact": (Source(f"{url}/moved-away.zip", ".", unzip_member="data/tabfact/"),),
    })  # fmt: skip
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def test_download_fetches_a_dataset_into_the_data_folder(mirror, tmp_path, capsys) -> None:
    data = tmp_path / "data"
    assert main(["download", "tabmwp", "wikitq", "--data-dir", str(data)]) == EXIT_OK
    printed = capsys.readouterr()
    assert (data / "tabmwp" / "problems_test1k.json").is_file()
    assert (data / "wikitq" / "data").is_dir()
    assert "tabmwp splits found: " in printed.out and "(the files may" not in printed.out
    assert "wikitq splits found: " in printed.out and "test" in printed.out
    assert f"tablereason eval --dataset tabmwp --data-dir {data}" in printed.out
    assert f"fetching {mirror}/problems_test1k.json" in printed.err
    assert main(["datasets", "--data-dir", str(data)]) == EXIT_OK
    listing = capsys.readouterr().out
    line = next(x for x in listing.splitlines() if x.startswith("tabmwp"))
    assert "(not found)" not in line


def test_download_failures_are_clear(mirror, tmp_path, capsys) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    assert main(["download", "tabfact", *data]) == EXIT_INPUT
    assert "HTTP 404" in capsys.readouterr().err
    assert main(["download", "tabmvp", *data]) == EXIT_USAGE
    assert "did you mean 'tabmwp'" in capsys.readouterr().err
    assert main(["download", "hotpotqa", *data]) == EXIT_USAGE  # not in these sources
    assert "hotpotqa has no public source" in capsys.readouterr().err
