"""Cell lineage: every cell of a derived table maps to the source cells it came from.

The random chains below carry an ``id`` column naming each source row (``#3``), which
no operation drops; the test reads the expected source row of every result row from it,
independently of the row ids the engine follows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason import Table
from tablereason.errors import RowIndexError, UnknownColumnError
from tablereason.operations import OPERATIONS
from tablereason.table import storage
from tablereason.table.provenance import SourceCell

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
values = st.sampled_from(["a", "b", "A", "1", "2", "10", "", " x "])


@contextmanager
def duckdb_only() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "SMALL_CELLS", 0)
        yield


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[list[str]], list[tuple[str, dict[str, Any]]]]:
    n = draw(st.integers(1, 9))
    rows = [[f"#{i}", *draw(st.lists(values, min_size=2, max_size=2))] for i in range(n)]
    steps: list[tuple[str, dict[str, Any]]] = []
    columns = ["id", "p", "q"]
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["rows", "sort", "lookup", "filter", "given", "computed"]))
        if kind == "rows":
            steps.append(("select_rows", {"indices": draw(st.lists(st.integers(0, 8)))}))
        elif kind == "sort":
            steps.append(("sort_by", {"column": draw(st.sampled_from(columns)),
                                      "descending": draw(st.booleans())}))  # fmt: skip
        elif kind == "lookup":
            steps.append(("lookup_rows", {"terms": [draw(st.sampled_from(["a", "1", "#"]))]}))
        elif kind == "filter":
            steps.append(("filter_rows", {"condition": "coalesce(CAST(p AS VARCHAR), '') <> 'b'"}))
        elif kind == "given" and f"g{len(steps)}" not in columns:
            columns.append(f"g{len(steps)}")
            steps.append(("add_column", {"name": columns[-1], "values": None}))
        elif kind == "computed":
            columns.append(f"c{len(steps)}")
            steps.append(("add_column", {"name": columns[-1], "expression": "lower(q) || p"}))
    if draw(st.booleans()):
        keep = draw(st.lists(st.sampled_from(columns[1:]), max_size=2))
        steps.append(("select_columns", {"names": ["id", *keep]}))
    return rows, steps


def build(rows: list[list[str]], steps: list[tuple[str, dict[str, Any]]]) -> list[Table]:
    tables = [Table.from_records(["id", "p", "q"], rows)]
    for name, args in steps:
        table = tables[-1]
        if name == "select_rows":
            args = {"indices": [i for i in args["indices"] if i < table.num_rows]}
        if name == "add_column" and args.get("values", 0) is None:
            args = {"name": args["name"], "values": [str(i) for i in range(table.num_rows)]}
        tables.append(table.apply(name, **args))
    return tables


def expected(source: list[list[str]], tables: list[Table], row: int, column: str) -> Any:
    """The provenance the chain implies, read from the id column and the steps."""
    final = tables[-1]
    origin = int(final.rows()[row][final.columns.index("id")][1:])
    if column in ("id", "p", "q"):
        return [SourceCell(origin, column, source[origin][["id", "p", "q"].index(column)])]
    if column.startswith("c"):  # lower(q) || p reads q and p, in table order
        return [SourceCell(origin, c, source[origin][i]) for i, c in ((1, "p"), (2, "q"))]
    return "untraced"


def check_chain(rows: list[list[str]], steps: list[tuple[str, dict[str, Any]]]) -> None:
    tables = build(rows, steps)
    final = tables[-1]
    for row in range(final.num_rows):
        for column in final.columns:
            found = final.provenance(row, column)
            want = expected(rows, tables, row, column)
            if want == "untraced":
                assert found.cells == () and found.untraced
            else:
                assert list(found.cells) == want and found.total == len(want) and found.complete
    replayed = tables[0].replay(final.steps())
    assert all(
        replayed.provenance(r, c) == final.provenance(r, c)
        for r in range(final.num_rows)
        for c in final.columns
    )


@SETTINGS
@given(chains())
def test_every_cell_of_a_chain_maps_to_its_source_cells(chain: Any) -> None:
    check_chain(*chain)


@SETTINGS
@given(chains())
def test_the_duckdb_path_maps_cells_as_python_does(chain: Any) -> None:
    with duckdb_only():
        check_chain(*chain)


@SETTINGS
@given(st.lists(st.sampled_from(["red", "blue", "", "Red"]), min_size=1, max_size=12))
def test_a_group_maps_to_the_rows_of_its_group(cells: list[str]) -> None:
    for large in (False, True):
        with duckdb_only() if large else _nothing():
            table = Table.from_records(["team", "n"], [[c, str(i)] for i, c in enumerate(cells)])
            grouped = table.group_by("team")
            for row, (value, count) in enumerate(grouped.rows()):
                members = [i for i, c in enumerate(cells) if c == value]
                want = tuple(SourceCell(i, "team", value) for i in members)
                assert grouped.provenance(row, "Count").cells == want
                assert grouped.provenance(row, "team").cells == want
                assert int(count) == len(want)
                assert grouped.provenance(row, None).rows == tuple(members)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def test_a_filtered_row_rests_on_the_cells_its_condition_reads() -> None:
    t = Table.from_records(
        ["day", "weather", "mm"], [["mon", "snow", "3"], ["tue", "rain", "9"], ["wed", "snow", "1"]]
    )
    snow = t.apply("add_column", name="y", expression="upper(day)").apply(
        "filter_rows", condition="weather = 'snow' AND y <> 'X'"
    )
    found = snow.provenance_of([(0, None), (1, None)])
    assert [(c.row, c.column) for c in found.cells] == [
        (0, "day"), (0, "weather"), (2, "day"), (2, "weather"),
    ]  # fmt: skip
    assert found.rows == (0, 2)
    # A cell asks about itself, not about the condition.
    assert snow.provenance(1, "mm").cells == (SourceCell(2, "mm", "1"),)


def test_a_looked_up_row_rests_on_its_cells_that_mention_a_term() -> None:
    t = Table.from_records(["city", "note"], [["Paris", "x"], ["Rome", "par"], ["Oslo", "y"]])
    for large in (False, True):
        with duckdb_only() if large else _nothing():
            found = Table.from_records(t.columns, t.rows()).lookup_rows(["PAR"])
            cells = found.provenance_of([(0, None), (1, None)]).cells
            assert [(c.row, c.column) for c in cells] == [(0, "city"), (1, "note")]


def test_a_query_maps_its_cells_through_the_rows_it_read() -> None:
    t = Table.from_records(
        ["name", "pts", "team"], [["a", "3", "x"], ["b", "1", "y"], ["c", "2", "x"]]
    )
    top = t.sql("SELECT team, count(*) AS n FROM t GROUP BY team ORDER BY n DESC LIMIT 1")
    assert top.rows() == [["x", "2"]]
    assert [c.row for c in top.provenance(0, "n").cells] == [0, 2]
    picked = t.sql("SELECT name FROM t WHERE CAST(pts AS INT) > 1 ORDER BY pts")
    assert picked.provenance(0, "name").cells == (SourceCell(2, "name", "c"),)
    assert picked.provenance(0, None).cells == (SourceCell(2, "pts", "2"),)
    joined = t.sql("SELECT a.name FROM t AS a JOIN t AS b ON a.name = b.name")
    lost = joined.provenance(0, "name")
    assert lost.cells == () and "joins tables" in lost.untraced[0]


def test_given_values_come_from_no_cell_and_say_so() -> None:
    t = Table.from_records(["a"], [["1"], ["2"]]).add_column("b", ["x", "y"])
    found = t.provenance(1, "b")
    assert found.cells == () and not found.complete
    assert "given to add_column" in found.untraced[0]
    assert t.provenance(1, "a").cells == (SourceCell(1, "a", "2"),)


def test_provenance_refuses_cells_outside_the_table() -> None:
    t = Table.from_records(["a"], [["1"]])
    with pytest.raises(RowIndexError):
        t.provenance(1, "a")
    with pytest.raises(UnknownColumnError, match="available columns"):
        t.provenance(0, "b")


def test_every_table_operation_declares_its_lineage() -> None:
    for name in OPERATIONS.names():
        operation = OPERATIONS.get(name)
        assert (operation.lineage is not None) == (operation.returns == "table"), name
        if operation.lineage is not None:
            assert operation.lineage.summary


def test_a_group_of_500000_rows_is_traced_exactly_and_read_in_part() -> None:
    n = 500_000
    frame = pd.DataFrame({"kind": np.where(np.arange(n) % 4 == 0, "rare", "common")})
    frame["kind"] = frame["kind"].astype(object)
    grouped = Table.from_pandas(frame).group_by("kind")
    assert grouped.rows() == [["common", "375000"], ["rare", "125000"]]
    found = grouped.provenance(1, "Count", limit=5)
    assert found.total == 125_000 and len(found.cells) == 5
    assert [c.row for c in found.cells] == [0, 4, 8, 12, 16]
