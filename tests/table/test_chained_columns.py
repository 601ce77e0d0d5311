"""Columns computed from computed columns: each reads the one before by name.

The stored expression of a column does not grow with the chain, reading the end of a
chain of 120 columns costs time in proportion to the chain (no recursion limit, no copy
of the chain per layer), DuckDB's plan does not double with each layer whatever the
query (the two optimizer rules that copied it are off), and past
:data:`~tablereason.operations.expression_bounds.MAX_LAYERS` computed columns a table
stores them, so a query never plans more layers than that.
"""

from __future__ import annotations

import time

import pytest

from tablereason.operations import table_profile
from tablereason.operations.expression_bounds import MAX_LAYERS
from tablereason.operations.row_expressions import column_types
from tablereason.table import Table
from tablereason.table.relation import closure
from tablereason.table.storage import render

CHAIN = 120


@pytest.fixture(scope="module")
def chain() -> Table:
    table = Table.from_records(["x0"], [[str(i)] for i in range(200)])
    for i in range(1, CHAIN + 1):
        table = table.apply("add_column", name=f"x{i}", expression=f"x{i - 1} + 0.5")
    return table


def test_the_stored_expression_does_not_grow_with_the_chain(chain: Table) -> None:
    sizes = set()
    for table in chain.lineage()[1:]:  # each column as it was added
        computed = table.kernel.refs[-1].computed
        assert computed is not None
        sizes.add(len(computed.value.sql(dialect="duckdb")))
    assert len(sizes) == 1  # the same expression at every step: a reference to the one before


def test_the_chain_reads_right_and_plans_a_bounded_relation(chain: Table) -> None:
    assert chain.column_values(f"x{CHAIN}")[:3] == ["60", "61", "62"]
    assert chain.column_values("x7")[:2] == ["3.5", "4.5"]
    assert sum(c.computed is not None for c in closure(list(chain.kernel.refs))) <= MAX_LAYERS
    with chain.kernel.scan() as scan:
        sql = render(scan.select(scan.cell(f"x{CHAIN}")))
    assert sql.count("LATERAL") <= MAX_LAYERS
    assert len(sql) < 30_000


def test_every_read_of_the_chain_is_quick(chain: Table) -> None:
    started = time.perf_counter()
    assert chain.apply("filter_rows", condition=f"x{CHAIN} > 250").num_rows == 9
    assert chain.sort_by(f"x{CHAIN}", descending=True).rows(1)[0][-1] == "259"
    assert chain.sql(f"SELECT max(CAST(x{CHAIN} AS DOUBLE)) AS m FROM t").rows() == [["259.0"]]
    assert len(chain.to_pipe(max_rows=3).splitlines()) == 4
    assert chain.group_by(f"x{CHAIN}").num_rows == 200
    assert column_types(chain, [f"x{CHAIN}"]) == {f"x{CHAIN}": "number"}
    ends = chain.select_columns(["x0", f"x{CHAIN}"])
    assert table_profile.profile(ends).columns[1].total == sum(i + 60 for i in range(200))
    assert time.perf_counter() - started < 30


def test_a_chain_that_reads_each_column_three_times_stays_linear() -> None:
    """Over a joined column (given values), every layer reading the one below thrice: the
    plan of each query grows with the chain, never doubles with each layer."""
    base = Table.from_records(["n"], [[str(i)] for i in range(500)])
    table = base.add_column("tag", [f"t{i % 7}" for i in range(base.num_rows)])
    table = table.apply("add_column", name="y0", expression="n")
    timings = []
    for i in range(1, MAX_LAYERS - 2):
        table = table.apply(
            "add_column", name=f"y{i}", expression=f"y{i - 1} + y{i - 1} - y{i - 1}"
        )
        started = time.perf_counter()
        table.rows(3)
        table.group_by(f"y{i}")
        column_types(table, [f"y{i}"])
        table_profile.profile(table.select_columns([f"y{i}"]), examples=2)
        timings.append(time.perf_counter() - started)
    assert table.column_values(f"y{MAX_LAYERS - 3}")[:3] == ["0", "1", "2"]
    assert timings[-1] < 20 * max(timings[0], 0.05), timings


def test_a_long_chain_of_text_stays_exact() -> None:
    table = Table.from_records(["w"], [["a"], ["b"]] * 3000)
    for i in range(1, 40):
        source = "w" if i == 1 else f"w{i - 1}"
        table = table.apply("add_column", name=f"w{i}", expression=f"upper({source}) || '.'")
    assert table.column_values("w39")[:2] == ["A" + "." * 39, "B" + "." * 39]


def test_the_optimizer_rules_that_copy_layers_are_off() -> None:
    from tablereason.table.database import database

    Table.from_records(["a"], [["1"]]).rows()  # the database exists
    cursor = database().cursor()  # closed after, so that no transaction stays open
    try:
        setting = cursor.execute("SELECT current_setting('disabled_optimizers')").fetchone()
    finally:
        cursor.close()
    assert setting is not None
    assert {"late_materialization", "partial_aggregate_pushdown"} <= set(
        str(setting[0]).lower().replace(" ", "").split(",")
    )
