"""A computed column is stored in parts (by row-id range) and reads back as one query would."""

from __future__ import annotations

import pytest

from tablereason.operations import add_column as add_column_module
from tablereason.table import Table
from tablereason.table.storage import Store


@pytest.mark.parametrize("part_rows", [1, 7, 1000, 100_000])
def test_parts_give_the_same_column_in_any_row_order(
    monkeypatch: pytest.MonkeyPatch, part_rows: int
) -> None:
    monkeypatch.setattr(add_column_module, "PART_ROWS", part_rows)
    appended = []
    original = Store.append_query
    monkeypatch.setattr(
        Store, "append_query", lambda self, *a: (appended.append(1), original(self, *a))[1]
    )
    rows = [[str(i), str((i * 37) % 101)] for i in range(3_000)]  # past the small-table size
    table = Table.from_records(["id", "score"], rows)
    reordered = table.sort_by("score", descending=True).select_rows(list(range(0, 3_000, 3)))
    out = reordered.apply("add_column", name="double", expression="score * 2")
    got = [(row[0], row[2]) for row in out.rows()]
    want = [(row[0], str(int(row[1]) * 2)) for row in reordered.rows()]
    assert got == want
    assert out.num_rows == 1_000
    assert len(appended) == -(-1_000 // part_rows) - 1  # the first part creates the table


def test_scattered_rows_and_the_empty_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(add_column_module, "PART_ROWS", 2)
    rows = [[str(i)] for i in range(3_000)]
    table = Table.from_records(["n"], rows).select_rows([2_999, 5, 9, 2, 1_500])
    assert table.apply("add_column", name="m", expression="n + 1").rows() == [
        ["2", "3"], ["5", "6"], ["9", "10"], ["1500", "1501"], ["2999", "3000"]
    ]
    empty = Table.from_records(["n"], rows).select_rows([])
    assert empty.apply("add_column", name="m", expression="n + 1").num_rows == 0
