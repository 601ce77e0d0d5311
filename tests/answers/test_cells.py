"""Cell searches give the same answers in Python (small tables) and in DuckDB (large ones)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason import Table
from tablereason.answers.cells import TableCells, cell_key, cell_number
from tablereason.table import storage

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
AWKWARD = st.sampled_from(
    ["", " ", "Oslo", "oslo ", "OSLO", "New  York", "new york", "1,104", "1104", " 1 104 ",
     "-3.5", "3.50", "$5", "5", "5.", ".5", "0.5", "1e3", "nan", "inf", "İstanbul", "ΑΣ", "ασ",
     "a\tb", "a b", "12 km", "+7", "7", "1,2,3"]
)  # fmt: skip
probes = AWKWARD | st.text(max_size=6)


@contextmanager
def duckdb_only() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "SMALL_CELLS", 0)
        yield


def both(rows: list[list[str]], work: Any) -> tuple[Any, Any]:
    python = work(TableCells(Table.from_records(["a", "b"], rows)))
    with duckdb_only():
        duck = work(TableCells(Table.from_records(["a", "b"], rows)))
    return python, duck


def plain(found: dict[str, Any]) -> dict[str, list[int]]:
    return {c: p.tolist() for c, p in found.items()}


@SETTINGS
@given(st.lists(st.lists(AWKWARD, min_size=2, max_size=2), min_size=1, max_size=8), probes)
def test_equal_cells_are_the_same_on_both_paths(rows: list[list[str]], probe: str) -> None:
    python, duck = both(rows, lambda cells: plain(cells.equal(probe)))
    assert python == duck
    for column, positions in python.items():  # and they do match, by the documented rule
        for row in positions:
            cell = rows[row][["a", "b"].index(column)]
            assert cell_key(cell) == cell_key(probe) or cell_number(cell) is not None


@SETTINGS
@given(st.lists(st.lists(AWKWARD, min_size=2, max_size=2), min_size=1, max_size=8))
def test_sums_are_the_same_on_both_paths(rows: list[list[str]]) -> None:
    python, duck = both(rows, lambda cells: cells.sums())
    assert python.keys() == duck.keys()
    for name, (total, mean) in python.items():
        assert duck[name] == pytest.approx((total, mean))


@SETTINGS
@given(st.lists(st.lists(AWKWARD, min_size=2, max_size=2), min_size=1, max_size=8), AWKWARD)
def test_rows_holding_a_value_are_the_same_on_both_paths(rows: list[list[str]], v: str) -> None:
    python, duck = both(rows, lambda cells: cells.holding("a", v).tolist())
    assert python == duck == [i for i, r in enumerate(rows) if r[0] == v]


def test_named_cells_are_the_same_on_both_paths() -> None:
    rows = [["Oslo", "New  York"], ["Rome", "1 104"], ["oslo", "x"]]
    text = "They went from new york to Oslo, 1 104 km."
    python, duck = both(rows, lambda cells: cells.named_in(text))
    assert python == duck == [("1 104", "b"), ("New  York", "b"), ("Oslo", "a"), ("oslo", "a")]


def test_a_sample_of_a_large_table_does_not_decide_its_sums() -> None:
    rows = [[str(i), str(i)] for i in range(3000)] + [["x", "1"]]
    with duckdb_only():
        sums = TableCells(Table.from_records(["a", "b"], rows)).sums()
    assert list(sums) == ["b"] and sums["b"][0] == sum(range(3000)) + 1
