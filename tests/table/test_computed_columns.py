"""A column computed by add_column's expression holds the expression, not a copy of its results.

Every read evaluates it over the rows it is asked for, so these tests check that it reads
as Python computes it in any row order and after any later operation, that nothing
proportional to the table is stored or joined, and that an error in the expression still
surfaces when the column is added.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.errors import SQLError
from tablereason.table import Table
from tablereason.table.storage import render

ROWS = 4_000  # 12,000 cells, past the small-table size: the operations run in DuckDB


def _numbers(n: int = ROWS) -> Table:
    return Table.from_records(
        ["id", "score", "kind"],
        [[str(i), str((i * 37) % 101), ("snow", "rain", "sun")[i % 3]] for i in range(n)],
    )


def _tables(table: Table) -> set[str]:
    with table.kernel.store.connection() as conn:
        found = conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    return {name for (name,) in found}


def test_the_column_stores_nothing_and_its_reads_join_nothing() -> None:
    table = _numbers()
    table.rows(1)  # the base table is written
    before = _tables(table)
    added = table.apply("add_column", name="double", expression="score * 2")
    assert _tables(added) == before
    assert added.column("double").computed is not None
    with added.kernel.scan() as scan:
        sql = render(scan.select(scan.cell("double")))
    assert "JOIN" not in sql.upper()
    assert added.column_values("double")[:3] == ["0", "74", "148"]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(0, ROWS - 1), min_size=0, max_size=60, unique=True),
    st.booleans(),
)
def test_any_row_order_reads_as_python_computes(picked: list[int], descending: bool) -> None:
    table = _numbers().sort_by("score", descending=descending).select_rows(picked)
    added = table.apply("add_column", name="v", expression="score * 2 + id")
    assert added.rows() == [[*r, str(int(r[1]) * 2 + int(r[0]))] for r in table.rows()]


def test_later_operations_read_the_computed_values() -> None:
    table = _numbers()
    rows = table.rows()
    added = table.apply("add_column", name="tens", expression="floor(score / 10)")
    tens = {r[0]: str(int(r[1]) // 10) for r in rows}

    kept = added.apply("filter_rows", condition="tens >= 9")
    assert [r[0] for r in kept.rows()] == [r[0] for r in rows if int(tens[r[0]]) >= 9]

    groups = dict(map(tuple, added.group_by("tens").rows()))  # type: ignore[arg-type]
    want: dict[str, int] = {}
    for value in tens.values():
        want[value] = want.get(value, 0) + 1
    assert groups == {k: str(v) for k, v in want.items()}

    ordered = added.sort_by("tens", descending=True, numeric=True).select_columns(["id", "tens"])
    assert [int(v) for v in ordered.column_values("tens")] == sorted(
        (int(v) for v in tens.values()), reverse=True
    )
    assert ordered.columns == ["id", "tens"]
    assert added.sql("SELECT max(tens) AS m FROM t").rows() == [["9"]]


def test_columns_computed_from_computed_and_from_stored_columns() -> None:
    table = _numbers().select_rows(range(0, ROWS, 2))  # a row order over the base rows
    labelled = table.add_column("label", [f"L{i}" for i in range(table.num_rows)])
    first = labelled.apply("add_column", name="plus", expression="score + 1")
    second = first.apply("add_column", name="tag", expression="label || '-' || kind")
    third = second.apply("add_column", name="big", expression="plus * 10")
    rows = table.rows()
    tag = [f"L{i}-{r[2]}" for i, r in enumerate(rows)]
    big = [str((int(r[1]) + 1) * 10) for r in rows]
    assert third.column_values("tag") == tag
    assert third.column_values("big") == big
    after = third.apply("filter_rows", condition="big > 1000").sort_by("id", descending=True)
    want = [(t, b) for t, b in zip(tag, big, strict=True) if int(b) > 1000][::-1]
    assert list(zip(after.column_values("tag"), after.column_values("big"), strict=True)) == want


def test_an_error_in_any_row_surfaces_when_the_column_is_added() -> None:
    rows = [[str(i)] for i in range(ROWS - 1)] + [["x"]]  # only the last row fails
    table = Table.from_records(["n"], rows)
    with pytest.raises(SQLError, match="failed"):
        table.apply("add_column", name="m", expression="CAST(n AS INTEGER) + 1")


def test_the_empty_table_and_replay() -> None:
    empty = _numbers().select_rows([])
    assert empty.apply("add_column", name="m", expression="score + 1").num_rows == 0
    table = _numbers(50)
    added = table.apply("add_column", name="m", expression="score + 1").apply(
        "filter_rows", condition="m > 90"
    )
    assert table.replay([s.to_dict() for s in added.steps()]).rows() == added.rows()


@pytest.mark.parametrize(
    "expression",
    ["random()", "n + random()", "now()", "current_date", "today()", "uuid()",
     "gen_random_uuid()", "nextval('s')", "setseed(0.5)", "get_current_time()"],
)  # fmt: skip
def test_volatile_functions_are_refused(expression: str) -> None:
    """A computed column is evaluated on every read, so its expression must give the same
    text each time: functions whose result changes between reads are refused."""
    table = Table.from_records(["n"], [[str(i)] for i in range(5)])
    with pytest.raises(SQLError, match="not allowed"):
        table.apply("add_column", name="m", expression=expression)
