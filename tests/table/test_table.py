"""Builders, errors, lineage and storage behaviour of Table."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

import tablereason as tr
from tablereason import Table


def test_from_records_pads_ragged_rows_and_widens_header() -> None:
    t = Table.from_records(["a", "b"], [["1"], ["2", "3", "4"], [None, 5]])
    assert t.columns == ["a", "b", "Column 3"]
    assert t.labels == ["a", "b", ""]
    assert t.rows() == [["1", "", ""], ["2", "3", "4"], ["", "5", ""]]


def test_empty_tables() -> None:
    with pytest.raises(tr.TableError, match="at least one column"):
        Table.from_records([], [])
    t = Table.from_records(["a"], [])
    assert t.num_rows == 0 and t.to_pipe() == "col : a"
    assert t.sort_by("a").num_rows == 0
    assert t.group_by("a").rows() == []


def test_from_pandas_keeps_text_and_stringifies_values() -> None:
    frame = pd.DataFrame({"name": ["Ann", " Bo "], "n": [1, 2], "x": [1.5, float("nan")]})
    t = Table.from_pandas(frame, caption="c")
    assert t.rows() == [["Ann", "1", "1.5"], [" Bo ", "2", ""]]
    back = t.to_pandas()
    assert list(back.columns) == ["name", "n", "x"] and back.iloc[1, 0] == " Bo "


def test_from_csv_standard_dialect_and_ragged_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('a,b\n"x, ""y""",2\n3\n4,5,6\n', encoding="utf-8")
    t = Table.from_csv(path, escape=None)
    assert t.to_records() == [["a", "b", ""], ['x, "y"', "2", ""], ["3", "", ""], ["4", "5", "6"]]
    empty = tmp_path / "e.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(tr.TableError, match="empty"):
        Table.from_csv(empty)


def test_from_csv_streams_many_rows_in_chunks(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    n = 120_000
    path.write_text("id,v\n" + "".join(f"{i},{i % 7}\n" for i in range(n)), encoding="utf-8")
    t = Table.from_csv(path)
    assert t.num_rows == n
    assert t.rows(max_rows=2) == [["0", "0"], ["1", "1"]]
    top = t.sort_by("id", descending=True)
    assert top.rows(max_rows=1) == [[str(n - 1), str((n - 1) % 7)]]
    assert sum(int(r[1]) for r in t.group_by("v").rows()) == n
    assert t.select_rows(range(0, n, 1000)).num_rows == n // 1000


def test_from_pipe_errors() -> None:
    with pytest.raises(tr.TableParseError, match="col : "):
        Table.from_pipe("row 1 : a")
    with pytest.raises(tr.TableParseError, match="row 2"):
        Table.from_pipe("col : a\nrow 1 : x\nrow 3 : y")
    with pytest.raises(tr.TableParseError, match="cells"):
        Table.from_pipe("col : a | b\nrow 1 : x")
    wrapped = Table.from_pipe("/*\ntable caption : c\ncol : a\nrow 1 : x\n*/")
    assert wrapped.caption == "c" and wrapped.rows() == [["x"]]


def test_errors_are_catchable_as_builtins() -> None:
    t = Table.from_records(["Name"], [["a"]])
    with pytest.raises(KeyError):
        t.select_columns(["nope"])
    with pytest.raises(IndexError):
        t.select_rows([3])
    with pytest.raises(ValueError):
        t.add_column("Name", ["b"])
    with pytest.raises(tr.UnknownNameError, match="did you mean 'sort_by'"):
        t.apply("sortby", column="Name")


def test_lineage_keeps_every_intermediate_table() -> None:
    t = Table.from_records(["a", "b"], [["1", "x"], ["2", "y"], ["3", "x"]])
    chain = t.select_rows([0, 2]).add_column("c", ["p", "q"]).sort_by("c", descending=True)
    tables = chain.lineage()
    assert [x.num_rows for x in tables] == [3, 2, 2, 2]
    assert tables[1].rows() == [["1", "x"], ["3", "x"]]  # still inspectable
    assert tables[2].columns == ["a", "b", "c"]
    assert chain.source() is t
    assert [s.operation for s in chain.steps()] == ["select_rows", "add_column", "sort_by"]
    assert t.replay(chain.steps()).equals(chain)


def test_sort_auto_numeric_decision_is_recorded() -> None:
    t = Table.from_records(["v"], [["$1,200"], ["15 km"], ["3"], [""]])
    step = t.sort_by("v").step
    assert step is not None and step.args.numeric is True
    assert "3 of 3" in step.detail["reason"]
    text = Table.from_records(["v"], [["1999-2000"], ["b"], ["a"]]).sort_by("v")
    assert text.step.args.numeric is False
    assert text.rows() == [["1999-2000"], ["a"], ["b"]]


def test_sql_runs_on_locked_database() -> None:
    t = Table.from_records(["a"], [["1"]])
    for query in [
        "SELECT current_setting('enable_external_access') FROM t",
        "SELECT * FROM t, read_text('/etc/passwd')",
        "SELECT getenv('HOME')",
        "COPY t TO '/tmp/x.csv'",
        "SELECT * FROM t; SET lock_configuration = false",
    ]:
        with pytest.raises(tr.SQLError):
            t.sql(query)
    from tablereason.table.storage import database

    # Even a statement that slipped past the guard could not reach files.
    with pytest.raises(Exception, match=r"disabled|Permission"):
        database().cursor().execute("SELECT * FROM read_text('/etc/hostname')").fetchall()
    with pytest.raises(Exception, match=r"lock|configuration"):
        database().cursor().execute("SET enable_external_access = true")


def test_sql_time_limit_interrupts() -> None:
    t = Table.from_records(["a"], [[str(i)] for i in range(3000)])
    with pytest.raises(tr.SQLError, match="longer than"):
        t.sql("SELECT count(*) FROM t AS x, t AS y, t AS z, t AS w", timeout_s=0.3)
    assert t.sql("SELECT count(*) AS n FROM t").rows() == [["3000"]]


def test_time_limits_share_one_watchdog_thread() -> None:
    import time

    from tablereason.table import deadlines

    watchdog = deadlines.Watchdog()
    fired: list[str] = []
    with watchdog.watch(0.05, lambda: fired.append("quick")):
        pass  # finishes in time: never fires, even after its deadline
    with (
        watchdog.watch(10, lambda: fired.append("long")),
        watchdog.watch(0.05, lambda: fired.append("slow")),
    ):
        time.sleep(0.3)  # the earlier deadline wakes the thread although it waits for 10 s
    time.sleep(0.1)
    assert fired == ["slow"]
    # The package's own queries under a time limit (filter_rows) share the process's one
    # watchdog thread (model SQL runs in a worker with its own).
    t = Table.from_records(["a"], [["1"]])
    t.apply("filter_rows", condition="a = 1")
    thread = deadlines.WATCHDOG._thread
    for _ in range(20):
        t.apply("filter_rows", condition="a = 1")
    assert deadlines.WATCHDOG._thread is thread and thread is not None and thread.is_alive()


def test_tables_are_usable_from_many_threads() -> None:
    t = Table.from_records(["k", "v"], [[str(i % 5), str(i)] for i in range(200)])
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                g = t.select_rows(range(0, 200, 2)).group_by("k")
                assert sum(int(r[1]) for r in g.rows()) == 100
                assert t.sort_by("v", descending=True).rows(max_rows=1) == [["4", "199"]]
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_display_forms() -> None:
    t = Table.from_records(["a|b", "c"], [["<x>", "1"]], caption="cap")
    assert "<td>&lt;x&gt;</td>" in t._repr_html_()
    assert t.to_markdown().splitlines()[0] == "| a\\|b | c |"
    assert repr(t).startswith("<Table 1x2>")


def test_import_is_light() -> None:
    code = (
        "import sys, time; t = time.perf_counter(); import tablereason; "
        "print(time.perf_counter() - t); "
        "print(any(m in sys.modules for m in ('duckdb', 'pandas', 'openai', 'llama_cpp')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, heavy = out.stdout.split()
    assert heavy == "False"
    assert float(seconds) < 1.0
