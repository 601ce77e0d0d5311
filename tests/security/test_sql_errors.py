"""Every failure of model SQL is a SQLError; text_to_sql never raises on a bad answer.

Hand-picked inputs that used to escape as other exceptions (``RecursionError``
from deep nesting, sqlglot's ``ParseError`` from constructs it cannot write
back), odd text of every kind, and property tests that any string given to
``Table.sql``, ``run_sql`` or the guard either returns or raises ``SQLError``.
"""

from __future__ import annotations

import contextlib

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.errors import SQLError
from tablereason.llm import ScriptedLLM
from tablereason.methods.baselines import TextToSQL
from tablereason.sandbox import SQLLimits, run_sql
from tablereason.sandbox.sql.guard import check_select
from tablereason.table import Table

LIMITS = SQLLimits(seconds=2.0, memory="256MB")
FRAME = pd.DataFrame({"name": ["Ann", "Bo", "Cy"], "score": ["3", "1", "2"]})
TABLE = Table.from_records(["name", "score"], [["Ann", "3"], ["Bo", "1"], ["Cy", "2"]])

BAD = [
    ("parens_60", "SELECT " + "(" * 60 + "1" + ")" * 60),
    ("parens_60_in_where", "SELECT * FROM t WHERE " + "(" * 60 + "true" + ")" * 60),
    ("nots_1000", "SELECT * FROM t WHERE " + "NOT " * 1000 + "true"),
    ("minus_1000", "SELECT " + "- " * 1000 + "1"),
    ("tilde_500", "SELECT " + "~" * 500 + "1"),
    ("brackets_60", "SELECT " + "[" * 60 + "1" + "]" * 60),
    ("braces_60", "SELECT " + "{'a': " * 60 + "1" + "}" * 60),
    ("case_200",
     "SELECT " + "CASE WHEN true THEN " * 200 + "1" + " END" * 200),
    ("subqueries_60", "SELECT * FROM " + "(SELECT * FROM " * 60 + "t" + ") x" * 60),
    ("functions_60", "SELECT " + "abs(" * 60 + "1" + ")" * 60),
    ("like_all_subquery", "SELECT * FROM t WHERE name LIKE ALL (SELECT name FROM t)"),
    ("like_any_subquery", "SELECT * FROM t WHERE name LIKE ANY (SELECT name FROM t)"),
    ("ilike_all_list", "SELECT * FROM t WHERE name ILIKE ALL ('%a%', '%n%')"),
    ("unterminated_string", "SELECT 'abc FROM t"),
    ("unterminated_identifier", 'SELECT "abc FROM t'),
    ("unterminated_comment", "SELECT 1 /* never closed"),
    ("dollar_quoted", "SELECT $$text$$ AS x"),
    ("positional_parameter", "SELECT * FROM t WHERE name = $1"),
    ("question_parameter", "SELECT * FROM t WHERE name = ?"),
    ("named_parameter", "SELECT * FROM t WHERE name = $name"),
    ("nul_byte", "SELECT 'a\x00b' AS x"),
    ("nul_outside_string", "SELECT 1\x00 AS x"),
    ("lone_surrogate", "SELECT '\ud800' AS x"),
    ("control_characters", "SELECT '\x1b[2J\x07' AS x FROM t"),
    ("empty", ""),
    ("blank", " \n\t "),
    ("only_comment", "-- nothing here"),
    ("only_semicolons", ";;;"),
    ("markdown_fence", "```sql\nSELECT 1\n```"),
    ("prose", "The answer is the row with the highest score."),
    ("unknown_function", "SELECT no_such_function(name) FROM t"),
    ("unknown_column", "SELECT nope FROM t"),
    ("type_error", "SELECT name + 1 FROM t"),
    ("division_by_zero", "SELECT 1 // 0 AS x"),
    ("overflow", "SELECT 9223372036854775807 + 1 AS x"),
    ("bad_cast", "SELECT CAST('x' AS INTEGER) AS x"),
    ("huge_number", "SELECT " + "9" * 5000 + " AS x"),
    ("huge_decimal_literal", "SELECT 1." + "0" * 5000 + " AS x"),
    ("long_identifier", 'SELECT 1 AS "' + "a" * 10_000 + '"'),
    ("emoji_identifier", 'SELECT name AS "\U0001f600" FROM t'),
    ("no_columns", "SELECT FROM t"),
    ("star_exclude_all", "SELECT * EXCLUDE (name, score) FROM t"),
    ("error_function", "SELECT error('boom') AS x"),
    ("interval_garbage", "SELECT INTERVAL 'x' AS x"),
    ("regex_garbage", "SELECT regexp_matches(name, '(') FROM t"),
    ("json_garbage", "SELECT json_extract('{', '$.a') AS x"),
    ("struct_star", "SELECT {'a': 1}.* AS x"),
    ("lambda_garbage", "SELECT list_transform([1], lambda: 1) AS x"),
    ("map_garbage", "SELECT MAP {1: 2, 1: 3} AS x"),
    ("nested_union_300", " UNION ALL ".join(["SELECT 1 AS x"] * 300)),
    ("or_chain_3000", "SELECT * FROM t WHERE " + " OR ".join(["name = 'x'"] * 3000)),
    ("group_by_garbage", "SELECT name FROM t GROUP BY ROLLUP(CUBE(name))"),
    ("window_garbage", "SELECT sum(1) OVER (ROWS BETWEEN 'a' PRECEDING AND 1 FOLLOWING) FROM t"),
    ("values_mismatch", "SELECT * FROM (VALUES (1), (1, 2)) v"),
    ("union_mismatch", "SELECT 1 UNION SELECT 1, 2"),
]  # fmt: skip


def test_enough_cases() -> None:
    assert len(BAD) >= 50


@pytest.mark.parametrize("query", [b[1] for b in BAD], ids=[b[0] for b in BAD])
def test_table_sql_fails_only_with_sql_error(query: str) -> None:
    try:
        TABLE.sql(query, timeout_s=2.0)
    except SQLError as error:
        assert str(error)
    assert TABLE.sql("SELECT count(*) AS n FROM t").rows() == [["3"]]


@pytest.mark.parametrize("query", [b[1] for b in BAD], ids=[b[0] for b in BAD])
def test_run_sql_fails_only_with_sql_error(query: str) -> None:
    try:
        run_sql({"t": FRAME}, query, LIMITS)
    except SQLError as error:
        assert str(error)
    assert run_sql({"t": FRAME}, "SELECT count(*) FROM t").rows == [(3,)]


@pytest.mark.parametrize("query", [b[1] for b in BAD], ids=[b[0] for b in BAD])
def test_text_to_sql_never_raises(query: str) -> None:
    method = TextToSQL(ScriptedLLM(replies=[query] * 2), patience=2, limits=LIMITS)
    prediction = method.run(TABLE, "Who scored most?")
    assert prediction.answer or prediction.error


def test_deep_nesting_is_refused_with_a_message() -> None:
    with pytest.raises(SQLError, match="nested too deeply"):
        TABLE.sql("SELECT " + "(" * 60 + "1" + ")" * 60)
    with pytest.raises(SQLError, match="nested too deeply"):
        run_sql(FRAME, "SELECT * FROM t WHERE " + "NOT " * 1000 + "true")


def test_non_text_queries_are_sql_errors() -> None:
    for query in (None, b"SELECT 1", 42, ["SELECT 1"]):
        with pytest.raises(SQLError):
            run_sql(FRAME, query)  # type: ignore[arg-type]
        with pytest.raises(SQLError):
            check_select(query, ["t"])  # type: ignore[arg-type]


def test_the_sql_error_says_what_happened() -> None:
    with pytest.raises(SQLError, match=r"does not parse|failed"):
        run_sql(FRAME, "SELECT * FROM t WHERE name LIKE ALL (SELECT name FROM t)")
    with pytest.raises(SQLError, match="nope"):
        TABLE.sql("SELECT nope FROM t")


# -- property tests ----------------------------------------------------------------------

FRAGMENTS = [
    "SELECT", "FROM", "t", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "WITH", "AS", "UNION",
    "ALL", "ANY", "LIKE", "NOT", "AND", "OR", "(", ")", "[", "]", "{", "}", ",", ";", "*",
    "'a'", '"name"', "name", "score", "1", "-", "+", "/", "||", "::", "CAST", "CASE", "WHEN",
    "THEN", "END", "lambda x:", "x", "->", "$1", "?", "--", "/*", "*/", "JOIN", "ON", "USING",
    "LATERAL", "PIVOT", "QUALIFY", "OVER", "PARTITION", "range(3)", "unnest", "repeat('x', 3)",
    "count(*)", "EXISTS", "IN", "IS", "NULL", "DISTINCT", "VALUES", "RECURSIVE", ".", ":",
]  # fmt: skip
sql_like = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30).map(" ".join)
any_text = st.text(max_size=200)
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(query=st.one_of(sql_like, any_text))
def test_any_text_to_the_guard_is_accepted_or_a_sql_error(query: str) -> None:
    with contextlib.suppress(SQLError):
        check_select(query, ["t"])


@FUZZ
@given(query=st.one_of(sql_like, any_text))
def test_any_text_to_run_sql_returns_or_raises_sql_error(query: str) -> None:
    with contextlib.suppress(SQLError):
        run_sql({"t": FRAME}, query, LIMITS)


@FUZZ
@given(query=st.one_of(sql_like, any_text))
def test_any_text_to_table_sql_returns_or_raises_sql_error(query: str) -> None:
    with contextlib.suppress(SQLError):
        TABLE.sql(query, timeout_s=2.0)
