"""A polars DataFrame is read as the pandas DataFrame of the same data is: the same column
types, the same NULLs, the same cell text, and the same prompts and answers through
``tr.ask``. polars is in the dev extra, so these run wherever the tests run."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tablereason as tr
from tablereason.api import load_table
from tablereason.llm import Request, ScriptedLLM
from tablereason.table.storage import SMALL_CELLS

pl = pytest.importorskip("polars")

# One column kind: how to draw a value, the pandas dtype and the polars dtype.
KINDS: dict[str, tuple[st.SearchStrategy[Any], str, Any]] = {
    "integer": (st.integers(-(2**62), 2**62), "Int64", pl.Int64),
    "decimal": (
        st.floats(allow_nan=False, allow_infinity=False, width=64).map(lambda x: x + 0.0),
        "float64",
        pl.Float64,
    ),
    "text": (st.text(max_size=8), "string", pl.String),
    "boolean": (st.booleans(), "boolean", pl.Boolean),
    "date": (st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31)), "date32[day][pyarrow]", pl.Date),
    "timestamp": (
        # whole seconds: fractions are written as DuckDB writes them (see the test below)
        st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31)).map(
            lambda t: t.replace(microsecond=0)
        ),
        "datetime64[us]",
        pl.Datetime("us"),
    ),
}


def _frames(columns: dict[str, tuple[str, list[Any]]]) -> tuple[pd.DataFrame, Any]:
    """The same data as a pandas frame (nullable dtypes) and as a polars frame."""
    frame = pd.DataFrame(
        {
            name: pd.Series(values, dtype=KINDS[kind][1], name=name)
            for name, (kind, values) in columns.items()
        }
    )
    polars = pl.DataFrame(
        {
            name: pl.Series(name, values, dtype=KINDS[kind][2])
            for name, (kind, values) in columns.items()
        }
    )
    return frame, polars


@st.composite
def data(draw: st.DrawFn) -> dict[str, tuple[str, list[Any]]]:
    n = draw(st.integers(0, 12))
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=5))
    return {
        f"{kind}_{i}": (kind, draw(st.lists(st.none() | KINDS[kind][0], min_size=n, max_size=n)))
        for i, kind in enumerate(kinds)
    }


@settings(max_examples=150, deadline=None)
@given(data())
def test_a_polars_frame_reads_as_the_pandas_frame_does(
    columns: dict[str, tuple[str, list[Any]]],
) -> None:
    """Types, NULLs and text agree for every kind of column, NULLs anywhere."""
    frame, polars = _frames(columns)
    from_pandas, from_polars = load_table(frame), load_table(polars)
    assert from_polars.types == from_pandas.types
    assert from_polars.to_records() == from_pandas.to_records()
    if from_pandas.num_rows:
        counts = ", ".join(f'count("{name}")' for name in columns)
        query = f"SELECT {counts} FROM t"
        assert from_polars.sql(query).rows() == from_pandas.sql(query).rows()
        # an empty text is a missing cell, as everywhere in a table
        expected = [str(sum(v not in (None, "") for v in values)) for _, values in columns.values()]
        assert from_pandas.sql(query).rows() == [expected]


def _large() -> dict[str, tuple[str, list[Any]]]:
    n = SMALL_CELLS // 4 + 500
    return {
        "id": ("integer", [None if i % 7 == 3 else i for i in range(n)]),
        "delay": ("decimal", [None if i % 5 == 1 else i * 1.5 for i in range(n)]),
        "tailnum": ("text", [None if i % 4 == 2 else f"N{i % 9}" for i in range(n)]),
        "day": ("date", [None if i % 6 == 0 else dt.date(2013, 1, 1) + dt.timedelta(i % 365)
                         for i in range(n)]),
    }  # fmt: skip


def test_a_large_polars_frame_streams_with_the_same_types_and_nulls() -> None:
    frame, polars = _frames(_large())
    from_pandas, from_polars = load_table(frame), load_table(polars)
    assert not from_polars.kernel.is_small()
    assert from_polars.types == from_pandas.types == {
        "id": "integer", "delay": "decimal", "tailnum": "text", "day": "date"
    }  # fmt: skip
    assert from_polars.rows(4) == from_pandas.rows(4)
    query = (
        "SELECT count(*) FILTER (WHERE tailnum IS NULL), count(id), max(delay), "
        "min(day), sum(id) FROM t"
    )
    assert from_polars.sql(query).rows() == from_pandas.sql(query).rows()
    condition = "tailnum IS NULL AND day > DATE '2013-06-01'"
    assert (
        from_polars.apply("filter_rows", condition=condition).num_rows
        == from_pandas.apply("filter_rows", condition=condition).num_rows
    )


def _recorded(reply: Any) -> tuple[ScriptedLLM, list[str]]:
    prompts: list[str] = []

    def answer(request: Request) -> str:
        prompts.append(request.as_text())
        return str(reply(request.as_text()))

    return ScriptedLLM(fn=answer), prompts


SMALL = {
    "carrier": ("text", ["UA", "AA", None, "DL", "UA"]),
    "dep_delay": ("integer", [5, None, 12, -3, 40]),
    "rate": ("decimal", [0.5, 1.25, None, 2.0, 3.5]),
    "day": ("date", [dt.date(2013, 1, 1), None, dt.date(2013, 1, 3), dt.date(2013, 1, 3),
                     dt.date(2013, 2, 1)]),
}  # fmt: skip


@pytest.mark.parametrize(
    ("method", "reply", "answer"),
    [
        # one table is text in Text-to-SQL's t (as the baseline's prompt says) ...
        ("text_to_sql", lambda _: " count(*) FROM t WHERE dep_delay = '';", "1"),
        # ... named tables are typed, a missing cell NULL
        ("text_to_sql named", lambda _: " count(*) FROM flights WHERE dep_delay IS NULL;", "1"),
        (
            "chain_of_table",
            lambda prompt: (
                " f_select_row(row 1, row 3) -> <END>"
                if "f_select_row" in prompt and "<END>" in prompt
                else "UA"
            ),
            "UA",
        ),
    ],
    ids=["text_to_sql", "text_to_sql_named", "chain_of_table"],
)
def test_ask_sees_a_polars_frame_as_the_pandas_frame(method: str, reply: Any, answer: str) -> None:
    """The same prompts, byte for byte, and the same answer, from either frame."""
    frame, polars = _frames(SMALL)
    runs = []
    for source in (frame, polars):
        llm, prompts = _recorded(reply)
        named = method.endswith(" named")
        prediction = tr.ask(
            {"flights": source} if named else source,
            "which carrier?",
            method=method.removesuffix(" named"),
            llm=llm,
        )
        assert prediction.error is None
        runs.append((prediction.answer, prompts))
    assert runs[0] == runs[1]
    assert runs[1][0] == [answer] and runs[1][1]
    assert load_table(polars).types == {
        "carrier": "text", "dep_delay": "integer", "rate": "decimal", "day": "date"
    }  # fmt: skip


def test_a_polars_nan_is_a_value_and_its_null_is_missing() -> None:
    """polars keeps NaN apart from null (pandas has only NaN for a missing float): a NaN
    reads as the cell ``nan``, a null as an empty cell, NULL in SQL."""
    polars = pl.DataFrame({"x": pl.Series([1.5, float("nan"), None], dtype=pl.Float64)})
    t = load_table(polars)
    assert t.types == {"x": "decimal"}
    assert t.rows() == [["1.5"], ["nan"], [""]]
    assert t.sql("SELECT count(x), count(*) FILTER (WHERE x IS NULL) FROM t").rows() == [["2", "1"]]


def test_fractions_of_a_second_keep_their_value_and_duckdb_writes_them() -> None:
    """A polars timestamp is written as Arrow data is (DuckDB's cast: ``.00029``), a pandas
    one as pandas writes it (``.000290``); both are the same timestamp."""
    at = [dt.datetime(2000, 1, 1, 0, 0, 0, 290), None, dt.datetime(2000, 1, 1, 12, 30, 5, 500000)]
    frame, polars = _frames({"at": ("timestamp", at)})
    from_pandas, from_polars = load_table(frame), load_table(polars)
    assert from_polars.types == from_pandas.types == {"at": "timestamp"}
    assert from_polars.rows() == [["2000-01-01 00:00:00.00029"], [""], ["2000-01-01 12:30:05.5"]]
    query = "SELECT epoch_us(at) FROM t"
    assert from_polars.sql(query).rows() == from_pandas.sql(query).rows()
