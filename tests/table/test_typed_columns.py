"""Typed columns: the inference, overrides, and missing cells as NULL through every reader.

Cells keep their text (what the model is shown); each column also has a type that
conditions, computed columns and ``Table.sql`` read. Every table here is built twice,
small (cells in Python) and large (past ``SMALL_CELLS``, queried in DuckDB), and the
same NULL counts must come out of both.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.errors import TableError, UnknownColumnError
from tablereason.table import Table, storage
from tablereason.table.storage import SMALL_CELLS
from tablereason.table.types import TYPES, column_types, declare_types, null_counts

# One column of each type; row i of each has a missing cell when i % 3 == 1.
PATTERN = {
    "word": lambda i: f"w{i % 7}",
    "count": lambda i: f"{i * 1000:,}",
    "ratio": lambda i: f"{i / 8:.3f}",
    "flag": lambda i: "true" if i % 2 else "FALSE",
    "day": lambda i: (dt.date(2013, 1, 1) + dt.timedelta(days=i % 300)).isoformat(),
    "when": lambda i: f"2013-01-{1 + i % 28:02d} {i % 24:02d}:30",
}
EXPECTED = {
    "word": "text",
    "count": "integer",
    "ratio": "decimal",
    "flag": "boolean",
    "day": "date",
    "when": "timestamp",
}


def _rows(n: int) -> list[list[str]]:
    return [["" if i % 3 == 1 else make(i) for make in PATTERN.values()] for i in range(n)]


@pytest.fixture(params=["small", "large"])
def table(request: pytest.FixtureRequest) -> Table:
    n = 30 if request.param == "small" else SMALL_CELLS // len(PATTERN) + 500
    t = Table.from_records(list(PATTERN), _rows(n))
    assert t.kernel.is_small() == (request.param == "small")
    return t


def _missing(t: Table) -> int:
    return sum(1 for i in range(t.num_rows) if i % 3 == 1)


def test_every_type_is_inferred_and_the_text_is_kept(table: Table) -> None:
    before = table.to_pipe(max_rows=20)
    assert table.types == EXPECTED
    assert table.to_pipe(max_rows=20) == before  # typing changes no text the model sees
    assert null_counts(table, table.columns) == dict.fromkeys(table.columns, _missing(table))


@pytest.mark.parametrize(
    ("cells", "kind"),
    [
        (["1", "-2", "+3", " 4 "], "integer"),
        (["1,200", "12,345,678"], "integer"),
        (["1,2"], "text"),  # not thousands
        (["99999999999999999999"], "decimal"),  # past 64 bits: still a number
        (["1", "2.5"], "decimal"),  # integers and decimals mix as decimals
        (["1e3", ".5", "-0.25"], "decimal"),
        (["inf", "-inf", "nan", "1"], "decimal"),  # as DuckDB writes them
        (["Infinity"], "text"),
        (["NaN"], "text"),
        (["True", "false"], "boolean"),
        (["yes", "no"], "text"),
        (["2012-01-31", "2012/2/1"], "date"),
        (["2012-02-30"], "text"),  # no such day
        (["20120131"], "integer"),
        (["infinity", "epoch"], "text"),  # DuckDB reads these as dates; we do not
        (["2012-01-31 10:00", "2012-01-31T10:00:00.5"], "timestamp"),
        (["2012-01-31", "2012-01-31 10:00"], "timestamp"),  # dates and times mix
        (["1", "x"], "text"),
        (["", " "], "empty"),  # no filled cell
        (["\t1"], "text"),  # only spaces are dropped around a cell
        (["2012-01-31 24:00"], "text"),
    ],
)
def test_the_inference(cells: list[str], kind: str) -> None:
    assert Table.from_records(["c"], [[c] for c in cells]).types == {"c": kind}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=20), st.booleans())
def test_integers_read_back_exactly(values: list[int], grouped: bool) -> None:
    cells = [f"{v:,}" if grouped else str(v) for v in values]
    t = Table.from_records(["n"], [[c] for c in cells])
    assert t.types == {"n": "integer"}
    assert [int(v) for (v,) in t.sql("SELECT n FROM t").rows()] == values


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                ["", " ", "1", "-2.5", "1,000", "true", "2013-01-01", "x", "2013-1-1 1:00"]
            ),
            st.text(alphabet="0123456789-.,: eE/tT", max_size=8),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_a_column_type_reads_every_filled_cell(cells: list[str]) -> None:
    """The type inferred is sound: no filled cell of the column reads as NULL."""
    t = Table.from_records(["c"], [[c] for c in cells])
    kind = t.types["c"]
    assert kind in (*TYPES, "empty")
    filled = sum(1 for c in cells if c.strip())
    (got,) = t.sql("SELECT count(c) FROM t").rows()[0]
    assert int(got) == filled, kind


def test_missing_cells_are_null_through_conditions_columns_and_sql(table: Table) -> None:
    n_missing = _missing(table)
    for name in table.columns:
        assert table.apply("filter_rows", condition=f'"{name}" IS NULL').num_rows == n_missing
        kept = table.apply("filter_rows", condition=f'"{name}" IS NOT NULL')
        assert kept.num_rows == table.num_rows - n_missing
        counted = table.sql(f'SELECT count(*) - count("{name}") FROM t').rows()
        assert counted == [[str(n_missing)]]
        marked = table.apply(
            "add_column", name="m", expression=f"CASE WHEN \"{name}\" IS NULL THEN 'none' END"
        )
        assert marked.column_values("m").count("none") == n_missing
        # a NULL value is an empty cell again in a computed column's text
        again = table.apply("add_column", name="again", expression=f'"{name}"')
        empty = [v == "" for v in table.column_values(name)]
        assert [v == "" for v in again.column_values("again")] == empty
    got = table.sql(
        "SELECT typeof(word), typeof(count), typeof(ratio), typeof(flag), typeof(day), "
        'typeof("when") FROM t LIMIT 1'
    ).rows()
    assert got == [["VARCHAR", "BIGINT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP"]]


def test_typed_values_compute_as_their_type(table: Table) -> None:
    first = table.sql("SELECT count + 1, year(day), flag AND true FROM t LIMIT 1").rows()
    assert first == [["1", "2013", "false"]]
    made = table.apply("add_column", name="k", expression="count || '-' || year(day)")
    assert made.column_values("k")[:3] == ["0-2013", "", "2000-2013"]


def test_missing_cells_through_every_operation(table: Table) -> None:
    n_missing = _missing(table)
    for name in table.columns:
        ordered = table.sort_by(name)
        values = ordered.column_values(name)
        assert values[-n_missing:] == [""] * n_missing  # missing cells sort last
        assert "" not in values[:-n_missing]
        assert (
            table.sort_by(name, descending=True).column_values(name)[-n_missing:]
            == [""] * n_missing
        )
        groups = dict(table.group_by(name).rows())
        assert groups[""] == str(n_missing)  # one group of the missing cells
        found = table.lookup_rows(["0", "w", "t", "f"], columns=[name]).column_values(name)
        assert found and "" not in found  # a missing cell holds no term
    picked = table.select_rows([0, 1, 2]).select_columns(["count", "day"])
    assert picked.rows() == [["0", "2013-01-01"], ["", ""], ["2,000", "2013-01-03"]]
    assert picked.types == {"count": "integer", "day": "date"}  # types follow the column
    assert picked.apply("filter_rows", condition="count IS NULL").rows() == [["", ""]]


def test_a_column_keeps_its_type_whatever_rows_a_table_keeps() -> None:
    t = Table.from_records(["c"], [["1"], ["x"]])
    assert t.select_rows([0]).types == {"c": "text"}  # decided over the whole column


def test_overrides_and_all_text() -> None:
    t = Table.from_records(["zip", "n"], [["02139", "4"], ["10001", ""]])
    declare_types(t, {"zip": "text"})
    assert t.types == {"zip": "text", "n": "integer"}
    assert t.apply("filter_rows", condition="zip = '02139'").num_rows == 1
    everything = Table.from_records(["zip", "n"], [["02139", "4"]])
    declare_types(everything, "text")
    assert everything.types == {"zip": "text", "n": "text"}
    assert everything.sql("SELECT typeof(n) FROM t").rows() == [["VARCHAR"]]
    with pytest.raises(TableError, match="choose one of integer, decimal"):
        declare_types(t, {"n": "number"})
    with pytest.raises(UnknownColumnError):
        declare_types(t, {"nope": "text"})


def test_a_cell_that_does_not_fit_an_override_reads_as_null() -> None:
    t = Table.from_records(["n"], [["1"], ["two"]])
    declare_types(t, {"n": "integer"})
    assert t.sql("SELECT count(n), sum(n) FROM t").rows() == [["1", "1"]]
    assert t.rows() == [["1"], ["two"]]  # the text is kept


def test_a_dataframe_keeps_its_dtypes() -> None:
    frame = pd.DataFrame(
        {
            "i": pd.array([1, None, 3], dtype="Int64"),
            "f": [0.5, None, 2.0],
            "b": [True, False, True],
            "t": pd.to_datetime(["2013-01-01 05:00", None, "2013-01-02 00:00"]),
            "s": ["01", None, "x"],
            "o": pd.Series(["1", "2", ""], dtype=object),
        }
    )
    t = Table.from_pandas(frame)
    assert t.types == {
        "i": "integer",
        "f": "decimal",
        "b": "boolean",
        "t": "timestamp",
        "s": "text",
        "o": "integer",  # an object column's type comes from its text
    }
    assert t.rows()[1] == ["", "", "false", "", "", "2"]  # NA, NaN, NaT and None are empty
    assert t.sql("SELECT count(i), count(t), count(s) FROM t").rows() == [["2", "2", "2"]]


def test_sql_results_and_group_tables_get_types_of_their_own() -> None:
    t = Table.from_records(["k", "v"], [["a", "1"], ["b", "2"], ["a", ""]])
    assert t.group_by("k").types == {"k": "text", "Count": "integer"}
    assert t.sql("SELECT k, sum(v) AS s FROM t GROUP BY k ORDER BY k").types == {
        "k": "text",
        "s": "integer",
    }


def test_computed_columns_are_typed_by_their_text() -> None:
    t = Table.from_records(["y", "m"], [["2013", "1"], ["2014", "12"]])
    made = t.apply("add_column", name="d", expression="make_date(y, m, 1)")
    assert column_types(made, ["d"]) == {"d": "date"}
    assert made.apply("filter_rows", condition="d > DATE '2013-06-01'").num_rows == 1


CELL_PARTS = st.sampled_from(
    ["", " ", "\t", "\xa0", "0", "1", "12", "-", "+", ",", ",000", ".", "5", "e", "E", "-3",
     "2013", "/", "-02", "-29", "-30", "1900", "2000", " ", "T", "10", ":", "23", "24", "59",
     "60", ".5", "inf", "nan", "true", "FaLsE", "x", "٣", "0000", "9999999999999999999"]
)  # fmt: skip
CELLS = st.lists(CELL_PARTS, max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(CELLS, min_size=1, max_size=6))
def test_python_and_duckdb_infer_alike(cells: list[str]) -> None:
    """A small table's types are decided in Python; the same cells in DuckDB agree."""
    small = Table.from_records(["c"], [[c] for c in cells])
    small_type = small.types["c"]
    assert small.kernel.store.held(small.kernel.base) is not None  # decided in Python
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "SMALL_CELLS", 0)
        large = Table.from_records(["c"], [[c] for c in cells])
        assert large.types["c"] == small_type
        assert null_counts(large, ["c"]) == null_counts(small, ["c"])


def test_the_large_table_view_shows_each_type_and_its_nulls(table: Table) -> None:
    from tablereason.methods.chain_of_table.large_view import column_line
    from tablereason.operations.table_profile import profile

    summary = profile(table, examples=3)
    n_missing = _missing(table)
    for column in summary.columns:
        assert column.type == EXPECTED[column.name]
        assert column.missing == n_missing and column.filled == table.num_rows - n_missing
        line = column_line(column)
        assert line.startswith(f"column {column.name} : {column.type} ; {n_missing} null ; ")
    empty = Table.from_records(["e", "n"], [["", "1"], [" ", "2"]])
    lines = [column_line(c) for c in profile(empty).columns]
    assert lines[0] == "column e : empty ; 2 null"
    assert lines[1].startswith("column n : integer ; 2 distinct")  # no null: not said
