"""Row expressions: filter_rows conditions and add_column expressions, checked and typed.

Conditions a model writes go through the same SQL guard as model-written SQL; the
hostile cases below must be refused with the project's own errors, and arbitrary
text must never raise anything else.
"""

from __future__ import annotations

import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.errors import SQLError, TableReasonError, UnknownColumnError
from tablereason.operations import row_expressions as R
from tablereason.sandbox.sql.guard import SQLGuardError
from tablereason.table import Table
from tablereason.table.types import SAMPLE_ROWS

HEADER = ["day", "rain mm", "kind"]
KINDS = ["snow", "rain", "sun", ""]


def _table(rows: list[list[str]]) -> Table:
    return Table.from_records(HEADER, rows)


rows_strategy = st.lists(
    st.tuples(
        st.integers(1, 28),
        st.one_of(st.just(""), st.integers(-50, 500).map(str), st.floats(-5, 5).map(repr)),
        st.sampled_from(KINDS),
    ).map(lambda r: [f"2013-02-{r[0]:02d}", r[1], r[2]]),
    min_size=0,
    max_size=40,
)
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}


@settings(max_examples=60, deadline=None)
@given(rows_strategy, st.sampled_from(sorted(OPS)), st.integers(-60, 510))
def test_number_conditions_match_python(rows: list[list[str]], op: str, bound: int) -> None:
    table = _table(rows)
    result = table.apply("filter_rows", condition=f'"rain mm" {op} {bound}')
    expected = [r for r in rows if r[1] != "" and OPS[op](float(r[1]), bound)]
    assert result.rows() == expected
    assert result.step is not None and result.step.operation == "filter_rows"


@settings(max_examples=40, deadline=None)
@given(rows_strategy, st.sampled_from(KINDS[:3]), st.integers(1, 28))
def test_text_and_date_conditions_match_python(rows: list[list[str]], kind: str, day: int) -> None:
    table = _table(rows)
    condition = f"kind = '{kind}' AND day >= '2013-02-{day:02d}'"
    expected = [r for r in rows if r[2] == kind and int(r[0][-2:]) >= day]
    assert table.apply("filter_rows", condition=condition).rows() == expected


@settings(max_examples=40, deadline=None)
@given(rows_strategy)
def test_expression_columns_match_python(rows: list[list[str]]) -> None:
    table = _table(rows)
    added = table.apply("add_column", name="dom", expression="day(day) * 2")
    assert added.column_values("dom") == [str(int(r[0][-2:]) * 2) for r in rows]


def test_column_types_decide_over_every_row() -> None:
    rows = [["2013-02-01", "1,200", "snow"]] * 3 + [["2013-02-02", "n/a", "rain"]]
    types = R.column_types(_table(rows), HEADER)
    assert types == {"day": "date", "rain mm": "text", "kind": "text"}
    assert R.column_types(_table(rows[:3]), ["rain mm"]) == {"rain mm": "integer"}


def test_the_condition_reaches_rows_beyond_any_view() -> None:
    rows = [[f"2013-02-{1 + i % 28:02d}", str(i), "sun"] for i in range(30_000)]
    rows[29_123][2] = "snow"
    table = _table(rows)
    found = table.apply("filter_rows", condition="kind = 'snow'")
    assert found.rows() == [rows[29_123]]


HOSTILE_GUARD = [
    "read_csv('/etc/passwd') IS NOT NULL",
    "getenv('HOME') = 'x'",
    "EXISTS (SELECT 1 FROM duckdb_settings())",
    "kind IN (SELECT name FROM other_table)",
    "current_setting('threads') = '1'",
    "glob('/*') IS NOT NULL",
]
HOSTILE_ROW = [
    "1 = 1; DROP TABLE t",
    "kind = 'x'; COPY t TO '/tmp/x.csv'",
    "count(*) > 1",
    "row_number() OVER () = 1",
    '"rain mm" > (SELECT max("rain mm") FROM t)',
    "kind = ?",
    "*",
    "1) UNION SELECT * FROM t WHERE (1",
    "x' OR '1'='1",
]


@pytest.mark.parametrize("condition", HOSTILE_GUARD)
def test_hostile_conditions_are_refused_by_the_sql_guard(condition: str) -> None:
    with pytest.raises(SQLGuardError):
        R.parse_expression(condition)


@pytest.mark.parametrize("condition", HOSTILE_ROW + HOSTILE_GUARD)
def test_hostile_conditions_never_run(condition: str) -> None:
    table = _table([["2013-02-01", "1", "snow"]])
    with pytest.raises((SQLError, UnknownColumnError)):
        table.apply("filter_rows", condition=condition)
    with pytest.raises((SQLError, UnknownColumnError)):
        table.apply("add_column", name="x", expression=condition)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_raises_only_project_errors(text: str) -> None:
    table = _table([["2013-02-01", "1", "snow"], ["2013-02-02", "", "rain"]])
    try:
        result = table.apply("filter_rows", condition=text or "x")
    except TableReasonError as err:
        assert str(err)  # a message for the model, never a bare error
    else:
        assert result.num_rows <= table.num_rows


def test_unknown_column_error_names_the_closest_and_suggests_quotes() -> None:
    table = _table([["2013-02-01", "1", "snow"]])
    with pytest.raises(UnknownColumnError, match="did you mean 'kind'"):
        table.apply("filter_rows", condition="kinds = 'snow'")
    with pytest.raises(UnknownColumnError, match="quoted text value, for example 'snow'"):
        table.apply("filter_rows", condition="kind = snow")


def test_quoted_names_for_prompts() -> None:
    assert R.quoted("kind") == "kind"
    assert R.quoted("rain mm") == '"rain mm"'
    assert R.quoted("Year") == '"Year"'
    assert R.quoted('a"b') == '"a""b"'


def test_filter_and_expression_steps_replay() -> None:
    rows = [["2013-02-01", "3", "snow"], ["2013-02-02", "9", "rain"]]
    table = _table(rows)
    result = table.apply("filter_rows", condition='"rain mm" > 5').apply(
        "add_column", name="d", expression="day(day)"
    )
    replayed = table.replay([s.to_dict() for s in result.steps()])
    assert replayed.rows() == result.rows() == [["2013-02-02", "9", "rain", "2"]]
    assert result.steps()[0].detail == {"types": {"rain mm": "integer"}}


def test_column_types_never_depend_on_the_sample() -> None:
    n = SAMPLE_ROWS + 2000  # past SMALL_CELLS: decided in DuckDB, sample first
    assert not _table([["", "1", "x"]] * n).kernel.is_small()
    late_text = [["2013-02-01", "1", "snow"]] * n + [["2013-02-02", "n/a", "rain"]]
    late_dates = [["", "1", "x"]] * n + [["2013-02-03", "2", "y"]]
    assert R.column_types(_table(late_text), ["rain mm"]) == {"rain mm": "text"}
    assert R.column_types(_table(late_dates), ["day"]) == {"day": "date"}
    found = _table(late_text).apply("filter_rows", condition="\"rain mm\" = 'n/a'")
    assert found.num_rows == 1


# Row expressions run on the process's own database (not in the SQL worker), so a
# function that builds a value of a size the text chooses must never reach DuckDB.
SIZE_BOMBS = [
    "length(repeat(kind, 1000000000)) > 0",
    "length(lpad(kind, 1000000000, 'x')) > 0",
    "length(rpad(kind, 1000000000, 'x')) > 0",
    "len(range(1000000000)) > 0",
    "len(generate_series(1, 1000000000)) > 0",
    "printf('%1000000000s', kind) = 'x'",
    "format('{:>1000000000}', kind) = 'x'",
    "length(replace(kind, 's', kind || kind || kind)) > 0",
    "length(regexp_replace(kind, '.', kind || kind, 'g')) > 0",
    "length(string_agg(kind, ',')) > 0",
    "len(list_value(kind, kind)) > 0",
    "len(string_split(kind, '')) > 0",
    "unnest(range(10)) > 0",
    "array_length(array_fill(kind, 1000000000)) > 0",
    "length(repeat(repeat(kind, 40000), 40000)) > 1",
]


@pytest.mark.parametrize("expression", SIZE_BOMBS)
def test_size_bombs_are_refused_before_they_run(expression: str) -> None:
    table = _table([["2013-02-01", "1", "snow"]])
    with pytest.raises(SQLError, match=r"not allowed|quoted text|does not parse"):
        table.apply("filter_rows", condition=expression)
    with pytest.raises(SQLError, match=r"not allowed|quoted text|does not parse"):
        table.apply("add_column", name="x", expression=expression)


@pytest.mark.parametrize(
    "expression",
    [
        "lower(trim(kind)) = 'snow'",
        "year(day) = 2013 AND month(day) = 2 AND dayofmonth(day) = 1",
        "CAST(regexp_extract(CAST(day AS VARCHAR), '(\\d+)$', 1) AS INTEGER) = 1",
        "CASE WHEN \"rain mm\" > 0 THEN 'wet' ELSE 'dry' END = 'wet'",
        "coalesce(\"rain mm\", 0) + abs(-1) >= 1 AND contains(kind, 'now')",
        "replace(kind, 'snow', 'ice') = 'ice' AND length(kind) BETWEEN 1 AND 10",
        "kind IN ('snow', 'rain') AND NOT kind LIKE 'r%'",
    ],
)
def test_allowed_scalar_functions_still_run(expression: str) -> None:
    table = _table([["2013-02-01", "1", "snow"], ["2013-02-02", "", "rain"]])
    assert table.apply("filter_rows", condition=expression).rows() == [["2013-02-01", "1", "snow"]]
