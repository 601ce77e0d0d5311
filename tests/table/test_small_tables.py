"""Small tables are worked on in Python; the results must equal DuckDB's.

Every test that compares paths builds the same table twice: once as usual (a
small table, whose operations run in Python over the cells it holds) and once
with ``storage.SMALL_CELLS`` set to 0, so that every operation runs in DuckDB.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from tablereason import Table
from tablereason.errors import SQLError
from tablereason.operations.lookup_rows import fold
from tablereason.operations.sort_by import (
    _LOOKS_NUMERIC,
    looks_numeric,
    number_expression,
    read_number,
)
from tablereason.table import storage
from tablereason.table.storage import database, fill, render

# Characters that make numbers, whitespace and case awkward: commas, signs, dots,
# units, every kind of space Python's strip() removes (and \v, which RE2's \s does
# not match), dotted capital I and sigma (whose lower case differs between Python
# and DuckDB), a NUL and a combining accent.
AWKWARD = "0123456789,.-+ $%kmKM\t\n\x0b\x0c\r\x1c\x85\xa0\u2003\u3000İΣσıIé\u0301\x00|"
awkward_text = st.text(alphabet=AWKWARD, max_size=10)
# Longer number-like cells, to reach the bounds of the "looks numeric" pattern
# (at most 3 characters before the number, 12 after it).
TOKENS = ["\x0b", "\xa0", " ", "\t", "\n", "\x1c", "\u3000", "$", "-", "+", ",", ".", "1", "05"]
numberish = st.lists(st.sampled_from([*TOKENS, "km", "x"]), max_size=20).map("".join)
any_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
cell_text = (
    awkward_text
    | numberish
    | any_text
    | st.sampled_from(
        ["", " ", "1,200", "-3.5", " -7", "1.2.3", ".", "-", "-.5", "5.", "0", "-0", "12 km"]
    )
    | st.sampled_from(["9" * 400, "-" + "9" * 400, "$1,000", "(tie)", "Norway", "norway"])
)
# Few distinct values per column, so sorts and groups meet ties.
tie_text = st.sampled_from(["1", "10", "9", "", " 9 ", "a", "A", "b", "ΑΣ", "ασ", "İ", "i"])

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def table_data(draw: st.DrawFn) -> tuple[list[str], list[list[str]], str | None]:
    width = draw(st.integers(min_value=1, max_value=4))
    header = draw(st.lists(st.sampled_from(["", "a", "A", "b c", "n"]), min_size=width))[:width]
    header += [""] * (width - len(header))
    cells = tie_text if draw(st.booleans()) else cell_text
    n = draw(st.integers(min_value=0, max_value=14))
    rows = draw(st.lists(st.lists(cells, min_size=width, max_size=width), min_size=n, max_size=n))
    caption = draw(st.none() | st.just("medals"))
    return header, rows, caption


@contextmanager
def duckdb_only() -> Iterator[None]:
    """Treat every table as large, so that operations take their DuckDB path."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "SMALL_CELLS", 0)
        yield


def both(
    data: tuple[list[str], list[list[str]], str | None],
    work: Callable[[Table], Any],
    *,
    runs_sql: bool = False,
) -> tuple[Any, Any]:
    """``work`` applied to the table on the Python path and on the DuckDB path.

    Unless ``work`` runs SQL, the small table must never have been written to DuckDB.
    """
    header, rows, caption = data
    small = Table.from_records(header, rows, caption=caption)
    assert small.kernel.held_cells() is not None
    python = work(small)
    with duckdb_only():
        large = Table.from_records(header, rows, caption=caption)
        duck = work(large)
        if large.num_rows:
            assert large.kernel.held_cells() is None
            assert large._base not in large._store._pending  # written to DuckDB, read there
    if small.num_rows and not runs_sql:
        assert small._base in small._store._pending  # never needed DuckDB
    return python, duck


def outcome(table: Table) -> dict[str, Any]:
    """Everything a caller can see of a result table."""
    step = table.step
    return {
        "columns": table.columns,
        "labels": table.labels,
        "rows": table.rows(),
        "pipe": table.to_pipe(),
        "step": step.to_dict() if step is not None else None,
    }


@SETTINGS
@given(table_data(), st.data())
def test_sort_is_the_same_on_both_paths(data: Any, draw: st.DataObject) -> None:
    column = draw.draw(st.sampled_from(Table.from_records(data[0], []).columns))
    descending = draw.draw(st.booleans())
    numeric = draw.draw(st.sampled_from([True, False, None]))

    def work(table: Table) -> dict[str, Any]:
        return outcome(table.sort_by(column, descending=descending, numeric=numeric))

    python, duck = both(data, work)
    assert python == duck


@SETTINGS
@given(table_data(), st.data())
def test_group_is_the_same_on_both_paths(data: Any, draw: st.DataObject) -> None:
    column = draw.draw(st.sampled_from(Table.from_records(data[0], []).columns))
    python, duck = both(data, lambda table: outcome(table.group_by(column)))
    assert python == duck


@SETTINGS
@given(table_data(), st.data())
def test_lookup_is_the_same_on_both_paths(data: Any, draw: st.DataObject) -> None:
    header, rows, _ = data
    columns = Table.from_records(header, []).columns
    pieces = [c[1:4] for row in rows for c in row if c.strip()]
    term = st.sampled_from(pieces) if pieces else st.just("x")
    changed = term.map(str.upper) | term.map(str.swapcase) | term | awkward_text | any_text
    terms = draw.draw(st.lists(changed, min_size=1, max_size=3))
    terms = terms if any(fold(t.replace("\x1f", "").strip()) for t in terms) else [*terms, "a"]
    searched = draw.draw(st.none() | st.lists(st.sampled_from(columns), min_size=1, max_size=2))
    python, duck = both(data, lambda table: outcome(table.lookup_rows(terms, searched)))
    assert python == duck


@SETTINGS
@given(table_data(), st.data())
def test_chains_and_views_are_the_same_on_both_paths(data: Any, draw: st.DataObject) -> None:
    header, rows, _ = data
    columns = Table.from_records(header, []).columns
    keep = draw.draw(st.lists(st.integers(0, max(len(rows) - 1, 0)), max_size=8))
    keep = keep if rows else []
    chosen = draw.draw(st.lists(st.sampled_from(columns), min_size=1, max_size=3))
    values = draw.draw(st.lists(cell_text, min_size=len(set(keep)), max_size=len(set(keep))))

    def work(table: Table) -> list[Any]:
        picked = table.select_rows(keep)
        added = picked.add_column("new", values)
        sorted_ = added.sort_by("new", descending=True)
        narrowed = sorted_.select_columns([*chosen, "new"]).lookup_columns(["new", chosen[0]])
        grouped = narrowed.group_by("new")
        return [
            *(outcome(t) for t in (picked, added, sorted_, narrowed, grouped)),
            narrowed.column_values("new"),
            sorted_.verbalize(max_rows=3),
            sorted_.rows(max_rows=2),
            sorted_.to_markdown(max_rows=2),
            outcome(sorted_.sql("SELECT * FROM t")),
            outcome(grouped.sql('SELECT "Count", count(*) AS k FROM t GROUP BY 1 ORDER BY 1')),
            sorted_.replay([s.to_dict() for s in grouped.steps()[-2:]]).rows(),
        ]

    python, duck = both(data, work, runs_sql=True)
    assert python == duck


# Each cell of a list parameter with what DuckDB computes from it.
PER_CELL = storage.template("SELECT x, :a, :b FROM unnest(CAST(? AS VARCHAR[])) AS u(x)")


def duckdb_per_cell(cells: list[str], a: exp.Expr, b: exp.Expr) -> dict[str, tuple[Any, Any]]:
    query = fill(PER_CELL, a=a, b=b)
    rows = database().cursor().execute(render(query), [cells]).fetchall()
    return {x: (first, second) for x, first, second in rows}


@SETTINGS
@given(st.lists(cell_text, max_size=20))
def test_number_and_numeric_look_match_duckdb(cells: list[str]) -> None:
    x = exp.column("x")
    found = duckdb_per_cell(cells, number_expression(x), fill(_LOOKS_NUMERIC, cell=x))
    assert {c: (read_number(c), looks_numeric(c)) for c in cells} == found


# Every code point (surrogates excepted) that DuckDB's lower() changes.
LOWERED = storage.template(
    "SELECT i, lower(chr(i)) FROM ("
    "SELECT CAST(range AS INTEGER) AS i FROM range(1, 55296) UNION ALL "
    "SELECT CAST(range AS INTEGER) FROM range(57344, 1114112)"
    ") WHERE lower(chr(i)) <> chr(i)"
)


def test_fold_matches_duckdb_lower_on_every_code_point() -> None:
    changed = dict(database().cursor().execute(render(LOWERED)).fetchall())
    assert len(changed) > 1000
    differing = [
        i
        for i in range(1, sys.maxunicode + 1)
        if not 0xD800 <= i <= 0xDFFF and fold(chr(i)) != changed.get(i, chr(i))
    ]
    assert differing == []
    assert fold("ΟΔΟΣ İZMİR") == "οδοσ izmir"  # per code point, as DuckDB lowers


def test_lookup_terms_fold_like_cells() -> None:
    rows = [["İZMİR"], ["ΟΔΟΣ"], ["izmir"], ["other"]]
    for make in (lambda: Table.from_records(["city"], rows),):
        small = make()
        assert small.lookup_rows(["İzmir"]).rows() == [["İZMİR"], ["izmir"]]
        assert small.lookup_rows(["ΟΔΟΣ"]).rows() == [["ΟΔΟΣ"]]
        with duckdb_only():
            large = make()
            assert large.lookup_rows(["İzmir"]).rows() == [["İZMİR"], ["izmir"]]
            assert large.lookup_rows(["ΟΔΟΣ"]).rows() == [["ΟΔΟΣ"]]


def test_small_tables_never_reach_duckdb_until_sql_needs_them() -> None:
    t = Table.from_records(["a", "n"], [["x", "3"], ["y", "-1"], ["x", "2,000"]], caption="c")
    chain = (
        t.select_rows([0, 1, 2])
        .add_column("b", ["p", "q", "r"])
        .sort_by("n")
        .lookup_rows(["x", "y"])
        .lookup_columns(["a", "n"])
        .select_columns(["a", "n"])
    )
    grouped = chain.group_by("a")
    assert chain.rows() == [["y", "-1"], ["x", "3"], ["x", "2,000"]]
    assert grouped.rows() == [["x", "2"], ["y", "1"]]
    assert chain.to_pipe().startswith("table caption : c\ncol : a | n")
    assert chain.verbalize(max_rows=1).count("Row") == 1
    store = t._store
    assert store._owned == []  # no physical table written yet
    # sql sends the cells Python holds to the SQL worker: still nothing written here
    assert chain.sql("SELECT max(a) AS m FROM t").rows() == [["y"]]
    assert chain.sql("SELECT min(a) AS m FROM t").rows() == [["x"]]
    assert t.sql("SELECT count(*) AS n FROM t").rows() == [["3"]]
    assert store._owned == [] and t._base in store._pending


def test_large_tables_keep_cells_in_duckdb() -> None:
    width = 4
    n = storage.SMALL_CELLS // width + 1
    t = Table.from_records(["a", "b", "c", "d"], [[str(i)] * width for i in range(n)])
    assert t.kernel.held_cells() is None and t._base in t._store._owned
    top = t.sort_by("a", descending=True)
    assert top._records is None and top.rows(max_rows=1) == [[str(n - 1)] * width]
    small = t.select_rows([0, 1])
    assert small._records is None and small.rows() == [["0"] * width, ["1"] * width]
    assert small.sort_by("a", descending=True).rows() == [["1"] * width, ["0"] * width]


def test_sql_statement_cache_keeps_tables_and_the_guard_apart() -> None:
    query = 'SELECT "v" FROM t ORDER BY "v" DESC LIMIT 1'
    a = Table.from_records(["v"], [["1"], ["3"], ["2"]])
    b = Table.from_records(["v"], [["7"], ["5"]])
    assert a.sql(query).rows() == [["3"]]
    assert b.sql(query).rows() == [["7"]]
    assert a.sql(query).rows() == [["3"]]
    assert a.select_rows([0, 2]).sql(query).rows() == [["2"]]
    for _ in range(2):  # a refused query is refused every time, never cached
        with pytest.raises(SQLError):
            a.sql("SELECT * FROM t; DROP TABLE t")
    with pytest.raises(SQLError, match="CTE another name"):
        a.sql("WITH t AS (SELECT 1) SELECT * FROM t")


def test_from_csv_keeps_small_files_in_python(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('a,b\n"x, y",2\n3\n', encoding="utf-8")
    t = Table.from_csv(path, escape=None)
    assert t.kernel.held_cells() == [["x, y", "2"], ["3", ""]]
    assert t.to_records() == [["a", "b"], ["x, y", "2"], ["3", ""]]
