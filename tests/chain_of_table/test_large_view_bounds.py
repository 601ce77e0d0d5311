"""The bounded table view stays bounded in width too: many columns and long cells."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.methods.chain_of_table.large_view import (
    CELL_CHARS,
    HIDDEN_CHARS,
    VIEW_COLUMNS,
    shown_columns,
    view_text,
)
from tablereason.methods.chameleon.table_view import fits, shown
from tablereason.methods.tool_tasks import table_view
from tablereason.table import Table


def wide_table(columns: int, rows: int, cell: int) -> Table:
    names = [f"measure_{i}" for i in range(columns - 1)] + ["price"]
    return Table.from_records(
        names, [[f"{r}-{c}-" + "x" * cell for c in range(columns)] for r in range(rows)]
    )


def bound(budget: int) -> int:
    """Most characters a view of ``budget`` lines can hold, whatever the table's width."""
    names = VIEW_COLUMNS * (len("measure_999") + 3)
    line = max(names, VIEW_COLUMNS * (CELL_CHARS + 3)) + 20
    return (budget + 4) * line + HIDDEN_CHARS + 100


def test_a_table_of_600_columns_shows_40_and_names_the_others_on_one_line() -> None:
    table = wide_table(600, 5, 10)
    view = view_text(table, "what is the price of row 2?", caption=None, budget=60)
    lines = view.splitlines()
    shown_names = lines[1].removeprefix("col : ").split(" | ")
    assert len(shown_names) == VIEW_COLUMNS and "price" in shown_names  # named in the question
    assert lines[2].startswith("more columns : 560 not shown : ")
    assert len(lines[2]) <= len("more columns : 560 not shown : ") + HIDDEN_CHARS
    assert all(len(line.split(" | ")) == VIEW_COLUMNS for line in lines if line.startswith("row "))


def test_long_cells_are_cut_in_the_rows_shown() -> None:
    table = Table.from_records(["a", "b"], [["y" * 5000, "short"]])
    row = next(line for line in view_text(table, "a?", caption=None, budget=10).splitlines()
               if line.startswith("row "))  # fmt: skip
    first = row.removeprefix("row 1 : ").split(" | ")[0]
    assert len(first) == CELL_CHARS and first.endswith("…")
    assert row.endswith("| short")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 400), st.integers(1, 60), st.integers(0, 600))
def test_the_view_has_a_bounded_size_whatever_the_shape(columns: int, rows: int, cell: int) -> None:
    table = wide_table(columns, rows, cell)
    view = view_text(table, "what is the price?", caption=None, budget=15)
    assert len(view) <= bound(15)
    agent = table_view(table, "what is the price?", rows=15)
    assert len(agent) <= bound(15) + 100
    chameleon = shown(table, "what is the price?", 30)
    assert len(chameleon) <= bound(30) + 200


@given(st.lists(st.text("abc_ ", min_size=1, max_size=6), min_size=1, max_size=80, unique=True),
       st.integers(1, 50))  # fmt: skip
def test_shown_columns_keeps_table_order_and_the_limit(names: list[str], limit: int) -> None:
    chosen = shown_columns(names, "what about abc?", limit)
    assert len(chosen) == min(limit, len(names))
    assert chosen == [n for n in names if n in set(chosen)]


def test_a_few_rows_of_many_columns_or_long_cells_do_not_count_as_fitting() -> None:
    assert fits(wide_table(5, 3, 10), 30)
    assert not fits(wide_table(VIEW_COLUMNS + 1, 3, 10), 30)
    assert not fits(Table.from_records(["a"], [["z" * (CELL_CHARS + 1)]]), 30)
    text = shown(wide_table(300, 3, 2000), "price?", 30)
    assert "all of them are above, some cells or columns cut" in text
    assert len(text) < bound(30)
