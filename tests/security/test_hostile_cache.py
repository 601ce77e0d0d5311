"""A corrupted response cache: bad files refused when opened, bad entries are misses.

A file that cannot be a cache (a folder, not SQLite, truncated, damaged, another
program's database) is a CacheFileError naming the file and the ways out, raised before
any request; another program's database is not modified. An entry that is not a valid
completion is a miss, reported once and replaced; the cache never runs code from an entry.
A failure met during a run is reported once and the run goes on without the cache.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import pickle
import sqlite3
from pathlib import Path

import pytest

import tablereason.llm.wrappers.cache as cache_module
import tablereason.llm.wrappers.cache_file as cache_file_module
from tablereason.cli import EXIT_USAGE, main
from tablereason.datasets.example import Example
from tablereason.evaluate.results import read_results
from tablereason.evaluate.runner import run_evaluation
from tablereason.llm import CachedLLM, CacheMissError, Request, ResponseStore, ScriptedLLM
from tablereason.llm.wrappers.cache_file import CacheFileError
from tablereason.table import Table

LOGGER = "tablereason.llm.wrappers.cache"


def recorded(path: Path, n: int = 300) -> Path:
    """A real cache file of ``n`` entries, checkpointed into the main file."""
    llm = CachedLLM(ScriptedLLM(fn=lambda r: "answer " + r.prompt * 20), path)
    for i in range(n):
        llm.complete(Request(prompt=f"q{i}"))
    conn = llm.store._connect()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def foreign(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    conn.commit()
    conn.close()
    return path


def wrong_columns(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE responses (key TEXT, answer TEXT)")
    conn.commit()
    conn.close()
    return path


def damaged_page(path: Path) -> Path:
    recorded(path, 600)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 4096] = os.urandom(4096)
    path.write_bytes(bytes(data))
    return path


def cut(fraction: float):
    def make(path: Path) -> Path:
        recorded(path)
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * fraction)])
        return path

    return make


BAD_FILES = {
    "text": (lambda p: p.write_text("key,completion\nk,v\n") and p, "not an SQLite file"),
    "binary": (lambda p: p.write_bytes(os.urandom(5000)) and p, "not an SQLite file"),
    "magic-then-garbage": (
        lambda p: p.write_bytes(b"SQLite format 3\x00" + os.urandom(5000)) and p,
        "cannot be used as a response cache",
    ),
    "header-only": (lambda p: p.write_bytes(recorded(p).read_bytes()[:100]) and p, "damaged"),
    "truncated-half": (cut(0.5), "malformed"),
    "truncated-tail": (cut(0.9), "malformed"),
    "damaged-page": (damaged_page, "damaged"),
    "foreign": (foreign, "another program (tables invoices)"),
    "wrong-columns": (wrong_columns, "its responses table has columns ('key', 'answer')"),
    "folder": (lambda p: p.mkdir() or p, "is a folder"),
    "fifo": (lambda p: os.mkfifo(p) or p, "not a regular file"),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_bad_files_are_refused_when_opened(tmp_path: Path, name: str) -> None:
    make, says = BAD_FILES[name]
    path = make(tmp_path / "cache.sqlite")
    inner = ScriptedLLM(replies=[])
    with pytest.raises(CacheFileError) as caught:
        CachedLLM(inner, path)
    message = str(caught.value)
    assert str(path) in message and says in message
    assert "--cache" in message and "delete" in message
    assert inner.requests == []


def test_a_parent_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(CacheFileError, match="cannot be opened"):
        ResponseStore(tmp_path / "file" / "cache.sqlite")


def test_another_programs_database_is_not_modified(tmp_path: Path) -> None:
    path = foreign(tmp_path / "app.db")
    before = path.read_bytes()
    with pytest.raises(CacheFileError):
        ResponseStore(path)
    assert path.read_bytes() == before
    assert not Path(str(path) + "-wal").exists()


def test_empty_and_missing_files_start_a_new_cache(tmp_path: Path) -> None:
    (tmp_path / "empty.sqlite").write_bytes(b"")
    for path in (tmp_path / "empty.sqlite", tmp_path / "new" / "cache.sqlite"):
        llm = CachedLLM(ScriptedLLM(replies=["4"]), path)
        assert llm.complete(Request(prompt="2+2")).text == "4"


def test_files_over_the_check_limit_open_without_the_full_check(tmp_path, monkeypatch) -> None:
    path = damaged_page(tmp_path / "c.sqlite")
    monkeypatch.setattr(cache_file_module, "CHECK_MAX_BYTES", 1000)
    store = ResponseStore(path)  # not checked at open: damage shows when it is read
    found = [
        store.get(cache_module.cache_key("scripted", "scripted", Request(prompt=f"q{i}")))
        for i in range(600)
    ]
    assert None in found  # the damaged entries are misses, and the file is set aside
    assert store.broken is not None


# --- bad entries --------------------------------------------------------------------------


def with_entry(path: Path, prompt: str, completion: object) -> CachedLLM:
    llm = CachedLLM(ScriptedLLM(fn=lambda r: "fresh"), path)
    key = llm.key(Request(prompt=prompt))
    llm._seen.clear()
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT OR REPLACE INTO responses VALUES (?, 'scripted', 'scripted', '{}', ?, 0)",
        (key, completion),
    )
    conn.commit()
    conn.close()
    return llm


class Planted:
    """Unpickling this would create the marker file: proof that code ran."""

    marker = ""

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "ran"))


def pickled(marker: Path) -> bytes:
    Planted.marker = str(marker)
    return pickle.dumps(Planted())


BAD_ENTRIES = {
    "invalid-json": "{not json",
    "empty-text": "",
    "json-object-of-another-shape": json.dumps({"answer": "x"}),
    "json-list": "[1, 2]",
    "json-number": "42",
    "json-null": "null",
    "choices-a-string": json.dumps({"choices": "hello"}),
    "choice-text-a-number": json.dumps({"choices": [{"text": 5}]}),
    "usage-wrong": json.dumps({"choices": [{"text": "x"}], "usage": {"prompt_tokens": "many"}}),
    "deeply-nested": '{"choices": [' + "[" * 20_000 + "]" * 20_000 + "]}",
    "integer-value": 12345,
    "blob": b"\x00\x01binary",
    "jsonpickle-style": json.dumps({"py/object": "os.system", "py/reduce": ["echo pwned"]}),
}


@pytest.mark.parametrize("name", BAD_ENTRIES)
def test_a_bad_entry_is_a_miss_answered_and_replaced(tmp_path, caplog, name: str) -> None:
    llm = with_entry(tmp_path / "c.sqlite", "q", BAD_ENTRIES[name])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        first = llm.complete(Request(prompt="q"))
    assert first.text == "fresh" and not first.cached
    assert llm.stats().bad == 1 and llm.stats().misses == 1
    assert [r.name for r in caplog.records] == [LOGGER]
    assert "unreadable entries" in caplog.records[0].getMessage()
    again = CachedLLM(ScriptedLLM(replies=[]), tmp_path / "c.sqlite")
    assert again.complete(Request(prompt="q")).cached  # the bad entry was replaced


def test_a_pickled_entry_is_never_unpickled(tmp_path: Path, caplog) -> None:
    marker = tmp_path / "marker"
    llm = with_entry(tmp_path / "c.sqlite", "q", pickled(marker))
    assert llm.complete(Request(prompt="q")).text == "fresh"
    assert not marker.exists()
    assert llm.stats().bad == 1


def test_bad_entries_are_reported_once(tmp_path: Path, caplog) -> None:
    path = tmp_path / "c.sqlite"
    llm = CachedLLM(ScriptedLLM(fn=lambda r: "fresh"), path)
    conn = sqlite3.connect(path)
    for i in range(5):
        key = llm.key(Request(prompt=f"q{i}"))
        conn.execute("INSERT INTO responses VALUES (?, 's', 's', '{}', 'broken', 0)", (key,))
    conn.commit()
    conn.close()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        texts = [llm.complete(Request(prompt=f"q{i}")).text for i in range(5)]
    assert texts == ["fresh"] * 5
    assert len(caplog.records) == 1 and llm.stats().bad == 5


def test_offline_a_bad_entry_is_a_miss_that_says_so(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with_entry(path, "q", "{not json")
    offline = CachedLLM(ScriptedLLM(replies=[]), path, offline=True)
    with pytest.raises(CacheMissError, match="recorded entry is unreadable"):
        offline.complete(Request(prompt="q"))


def test_the_cache_code_cannot_deserialise_code() -> None:
    banned_modules = {"pickle", "marshal", "shelve", "dill", "cloudpickle", "yaml", "jsonpickle"}
    for module in (cache_module, cache_file_module):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not {a.name.split(".")[0] for a in node.names} & banned_modules
            if isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] not in banned_modules
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("eval", "exec", "compile", "__import__")


# --- failures during a run ----------------------------------------------------------------


def test_a_file_that_fails_during_a_run_is_set_aside_once(tmp_path, monkeypatch, caplog) -> None:
    llm = CachedLLM(ScriptedLLM(fn=lambda r: "fresh"), tmp_path / "c.sqlite")

    def broken() -> sqlite3.Connection:
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(llm.store, "_connect", broken)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        texts = [llm.complete(Request(prompt=f"q{i}")).text for i in range(4)]
    assert texts == ["fresh"] * 4
    assert len(caplog.records) == 1 and "goes on without it" in caplog.records[0].getMessage()
    assert llm.stats().entries == 0


def test_an_evaluation_over_a_bad_cache_keeps_every_result(tmp_path, caplog) -> None:
    path = tmp_path / "c.sqlite"
    llm = CachedLLM(ScriptedLLM(fn=lambda r: r.prompt.upper()), path)
    conn = sqlite3.connect(path)
    for i in range(0, 12, 3):  # every third example has a planted bad entry
        key = llm.key(Request(prompt=f"city {i}"))
        conn.execute("INSERT INTO responses VALUES (?, 's', 's', '{}', '[[', 0)", (key,))
    conn.commit()
    conn.close()
    table = Table.from_records(["city"], [["Oslo"]])
    examples = [
        Example.from_table(table, f"city {i}", answer=f"CITY {i}", id=f"e{i}") for i in range(12)
    ]
    out = tmp_path / "run" / "results.jsonl"
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        summary = run_evaluation(
            lambda ex: llm.complete(Request(prompt=ex.question)).text,
            examples,
            out,
            progress=False,
            metric="hotpotqa_em",
        )
    _, records, _ = read_results(out)
    assert summary.failed == 0 and len(records) == 12
    assert all(r["error"] is None for r in records)
    assert llm.stats().bad == 4 and len(caplog.records) == 1


# --- the command line ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["text", "truncated-half", "foreign", "folder"])
def test_cli_ask_refuses_a_bad_cache_before_any_request(tmp_path, capsys, name: str) -> None:
    make, says = BAD_FILES[name]
    cache = make(tmp_path / "cache.sqlite")
    table = tmp_path / "t.csv"
    table.write_text("city\nOslo\n")
    argv = [
        "ask",
        str(table),
        "which?",
        "--cache",
        str(cache),
        "--model",
        "gpt-test",
        "--base-url",
        "http://127.0.0.1:9/v1",
    ]  # nothing listens: no request may be made
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert str(cache) in err and says in err and "Traceback" not in err
    assert err.count("\n") == 1
