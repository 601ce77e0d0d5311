"""The row functions analysts write (dates, casts, coalesce) hold against a hostile model.

``make_date``, ``make_timestamp``, ``make_time``, ``date_trunc``, ``strftime``,
``extract``, ``TRY_CAST``, ``CAST``, ``coalesce`` and ``nullif`` are on the allow-list of
row expressions. Each is run with huge, out-of-range and wrongly typed arguments and
nested deep; each is refused with a ``SQLError`` (through ``add_column`` and
``filter_rows``: before it runs when the guard or the allow-list sees it, else by
DuckDB's own checks), within the time and memory bounds of every row expression.
"""

from __future__ import annotations

import time

import pytest

from tablereason.errors import SQLError
from tablereason.table import Table

ROWS = 3_000
BIG = "9223372036854775807"


def _table() -> Table:
    return Table.from_records(
        ["year", "month", "day", "hour", "kind", "delay"],
        [
            ["2013", str(1 + i % 12), str(1 + i % 28), str(i % 24), ("a", "b")[i % 2],
             "" if i % 5 == 0 else str(i % 90 - 20)]
            for i in range(ROWS)
        ],
    )  # fmt: skip


TABLE = _table()


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


ORDINARY = {
    "make_date(year, month, day)": "2013-01-01",
    "make_timestamp(year, month, day, hour, 30, 0)": "2013-01-01 00:30:00",
    "make_time(hour, 5, 0.5)": "00:05:00.5",
    "date_trunc('month', make_date(year, month, day))": "2013-01-01 00:00:00",
    "strftime(make_date(year, month, day), '%Y-%m')": "2013-01",
    "extract(quarter FROM make_date(year, month, day))": "1",
    "TRY_CAST(delay AS INTEGER)": "",
    "CAST(delay AS DOUBLE) / 2": "",
    "coalesce(delay, -1)": "-1",
    "nullif(kind, 'a')": "",
    "year || '-' || month": "2013-1",
}


@pytest.mark.parametrize(("expression", "first"), ORDINARY.items(), ids=range(len(ORDINARY)))
def test_the_functions_run(expression: str, first: str) -> None:
    added = TABLE.apply("add_column", name="v", expression=expression)
    assert added.column_values("v")[0] == first
    assert TABLE.apply("filter_rows", condition=f"({expression}) IS NOT NULL").num_rows > 0


HOSTILE = [
    f"make_date({BIG}, 1, 1)",
    f"make_date(year, {BIG}, 1)",
    "make_date(year, 13, 1)",
    "make_date(year, month, 32)",
    "make_date(-" + BIG + ", 1, 1)",
    "make_date(kind, month, day)",
    "make_date(make_date(year, month, day), 1, 1)",
    f"make_timestamp(year, month, day, {BIG}, 0, 0)",
    "make_timestamp(year, month, day, 0, 0, 1e308)",
    "make_timestamp(" + BIG + ")",  # microseconds past the end of time
    "make_time(25, 0, 0)",
    "make_time(1, 1, 1e308)",
    "date_trunc(kind, make_date(year, month, day))",  # a unit from a cell
    "date_trunc('eon', make_date(year, month, day))",
    "strftime(make_date(year, month, day), kind || '%Q')",
    "strftime(kind, '%Y')",
    "extract(nonsense FROM make_date(year, month, day))",
    "extract(year FROM kind)",
    "CAST(kind AS INTEGER)",
    "CAST(year AS DATE)",
    f"CAST({BIG}9 AS BIGINT)",
    "CAST(year AS INTEGER[])",
    "CAST(year AS STRUCT(a INT))",
    "TRY_CAST(year AS MAP(INT, INT))",
    "TRY_CAST(year AS BLOB)",
    "coalesce(kind, 1) + 1",
    "nullif(make_date(year, month, day), kind) > 1",
    "make_date(" * 60 + "year" + ", 1, 1)" * 60,
    "strftime(" * 40 + "make_date(year, month, day)" + ", '%Y')" * 40,
    "coalesce(" * 150 + "delay" + ")" * 150,
    "nullif(" * 120 + "delay" + ", 0)" * 120,
    "TRY_CAST(" * 120 + "delay" + " AS INTEGER)" * 120,
    "date_trunc('day', " * 100 + "make_date(year, month, day)" + ")" * 100,
]


def test_the_hostile_cases_are_many() -> None:
    assert len(HOSTILE) >= 30


@pytest.mark.parametrize("expression", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_arguments_are_a_project_error(expression: str) -> None:
    before, started = _rss(), time.perf_counter()
    with pytest.raises(SQLError) as refused:
        TABLE.apply("add_column", name="v", expression=expression)
    assert str(refused.value)
    with pytest.raises(SQLError):
        TABLE.apply("filter_rows", condition=f"({expression}) IS NULL")
    assert time.perf_counter() - started < 10
    assert _rss() - before < 64 * 2**20


def test_a_huge_strftime_format_is_bounded() -> None:
    """A format's size is bounded by the expression's length; each ``%`` may write a
    day's or month's name, and the bound counts that."""
    from tablereason.operations.expression_bounds import ExpressionLimits, set_expression_limits

    set_expression_limits(ExpressionLimits(max_value_bytes=64 * 1024))
    try:
        with pytest.raises(SQLError, match="per row"):
            TABLE.apply(
                "add_column",
                name="v",
                expression="strftime(make_date(year, month, day), '" + "%A" * 900 + "')",
            )
    finally:
        set_expression_limits(None)
    long = "strftime(make_date(year, month, day), '" + "%A" * 5000 + "')"
    with pytest.raises(SQLError, match="characters long"):
        TABLE.apply("add_column", name="v", expression=long)
