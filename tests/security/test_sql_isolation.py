"""A query over one table reads that table and nothing else of the process.

Two tables are loaded (a small one held in Python and written to DuckDB, a large
one that lives only in DuckDB); both hold a secret cell. Every query below is run
over a third, public table through ``Table.sql``, the sandbox's ``run_sql`` and
the ``text_to_sql`` method with a scripted model. Each may fail (with a
``SQLError``) or return rows, but no result, error message or trace may contain
the secret or the physical name of another table's storage.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from tablereason.errors import SQLError
from tablereason.llm import ScriptedLLM
from tablereason.methods.baselines import TextToSQL
from tablereason.sandbox import SQLLimits, run_sql
from tablereason.table import Table, storage
from tablereason.table.sqlengine import TableInput, execute

SECRET = "s3cr3t-Zq81"
PUBLIC_ROWS = [["Ann", "3"], ["Bo", "1"], ["Cy", "2"]]
LIMITS = SQLLimits(seconds=2.0, memory="256MB")


@pytest.fixture(scope="module")
def world() -> Iterator[dict[str, Any]]:
    small = Table.from_records(["key", "value"], [["password", SECRET], ["other", "x"]])
    small.kernel.store.require([small.kernel.base])  # written to the shared DuckDB database
    wide = 4
    n = storage.SMALL_CELLS // wide + 10
    large = Table.from_records(
        ["a", "b", "c", "d"], [[SECRET if i == 7 else str(i)] * wide for i in range(n)]
    )
    assert large.kernel.held_cells() is None  # only DuckDB holds it
    storage.database().execute("SET VARIABLE leak = 's3cr3t-Zq81'")
    yield {"small": small.kernel.base, "large": large.kernel.base, "keep": (small, large)}


ISOLATION = [
    # the name of another table's storage, plainly or dressed up
    ("plain", "SELECT * FROM {small}"),
    ("from_first", "FROM {large}"),
    ("quoted", 'SELECT * FROM "{small}"'),
    ("upper", "SELECT * FROM {SMALL}"),
    ("quoted_upper", 'SELECT * FROM "{SMALL}"'),
    ("schema_qualified", "SELECT * FROM main.{small}"),
    ("catalog_qualified", "SELECT * FROM memory.main.{small}"),
    ("quoted_qualified", 'SELECT * FROM "memory"."main"."{small}"'),
    ("temp_schema", "SELECT * FROM temp.main.{small}"),
    ("cyrillic_a", "SELECT * FROM b\u0430se_0"),
    ("fullwidth", "SELECT * FROM \uff42ase_0"),
    ("struct_reference", "SELECT {small} FROM t"),
    # CTEs: a CTE inside a subquery named like the other table, used outside it
    ("cte_in_subquery", "SELECT * FROM (WITH {small} AS (SELECT 1) SELECT 1) x, {small}"),
    ("cte_in_scalar", "SELECT (WITH {small} AS (SELECT 1 AS k) SELECT k), * FROM {small}"),
    ("cte_in_cte", "WITH a AS (WITH {small} AS (SELECT 1) SELECT 1) SELECT * FROM {small}"),
    ("cte_in_exists",
     "SELECT * FROM t WHERE EXISTS (WITH {large} AS (SELECT 1) SELECT 1) "
     "UNION ALL SELECT a, b FROM {large}"),
    ("cte_catalog_name",
     "SELECT * FROM (WITH sqlite_master AS (SELECT 1 AS x) SELECT * FROM sqlite_master) q, "
     "sqlite_master"),
    ("cte_later_sibling",
     "WITH a AS (SELECT * FROM {small}), {small} AS (SELECT 1) SELECT * FROM a"),
    ("cte_recursive_named",
     "WITH RECURSIVE {small}(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM {small} WHERE n < 2) "
     "SELECT * FROM (SELECT 1) q, (SELECT * FROM {small}) r"),
    ("cte_shadow_t", "WITH t AS (SELECT * FROM {small}) SELECT * FROM t"),
    # the catalog
    ("sqlite_master", "SELECT * FROM sqlite_master"),
    ("information_schema", "SELECT * FROM information_schema.tables"),
    ("information_columns", "SELECT * FROM information_schema.columns"),
    ("pg_catalog", "SELECT * FROM pg_catalog.pg_tables"),
    ("duckdb_tables", "SELECT * FROM duckdb_tables()"),
    ("duckdb_columns_scalar", "SELECT (SELECT count(*) FROM duckdb_columns()) AS n"),
    ("duckdb_views", "SELECT * FROM duckdb_views()"),
    ("system_qualified", "SELECT * FROM system.main.duckdb_tables()"),
    ("pragma_table_info", "SELECT * FROM pragma_table_info('{small}')"),
    ("pragma_show_tables", "SELECT * FROM pragma_show_tables()"),
    ("show_tables", "SHOW TABLES"),
    ("show_all_tables", "SHOW ALL TABLES"),
    ("describe", "DESCRIBE {small}"),
    ("summarize", "SUMMARIZE {small}"),
    ("query_table", "SELECT * FROM query_table('{small}')"),
    ("query_function", "SELECT * FROM query('SELECT * FROM {small}')"),
    ("getvariable", "SELECT getvariable('leak') AS v FROM t"),
    ("current_setting", "SELECT current_setting('memory_limit') AS v"),
    ("replacement_scan", "SELECT * FROM secret_frame"),
    # subqueries in every clause
    ("select_list", "SELECT (SELECT max(value) FROM {small}) AS v FROM t"),
    ("where_in", "SELECT * FROM t WHERE name IN (SELECT value FROM {small})"),
    ("where_exists", "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM {small} WHERE value > '')"),
    ("where_any", "SELECT * FROM t WHERE name = ANY (SELECT value FROM {small})"),
    ("having", "SELECT count(*) FROM t HAVING count(*) > (SELECT count(*) FROM {small})"),
    ("group_by", "SELECT (SELECT max(value) FROM {small}) g, count(*) FROM t GROUP BY g"),
    ("order_by", "SELECT * FROM t ORDER BY (SELECT max(value) FROM {small})"),
    ("limit", "SELECT * FROM t LIMIT (SELECT count(*) FROM {small})"),
    ("offset", "SELECT * FROM t OFFSET (SELECT count(*) FROM {small})"),
    ("qualify", "SELECT * FROM t QUALIFY row_number() OVER () <= (SELECT count(*) FROM {small})"),
    ("window_partition",
     "SELECT sum(1) OVER (PARTITION BY (SELECT max(value) FROM {small})) FROM t"),
    ("case", "SELECT CASE WHEN 1 = 1 THEN (SELECT max(value) FROM {small}) END FROM t"),
    ("join_on", "SELECT * FROM t JOIN {small} s ON true"),
    ("lateral", "SELECT * FROM t, LATERAL (SELECT value FROM {small}) x"),
    ("join_lateral", "SELECT * FROM t JOIN LATERAL (SELECT * FROM {large}) x ON true"),
    ("union", "SELECT name, score FROM t UNION ALL SELECT key, value FROM {small}"),
    ("union_by_name", "SELECT * FROM t UNION ALL BY NAME SELECT * FROM {small}"),
    ("intersect", "SELECT value FROM {small} INTERSECT SELECT value FROM {small}"),
    ("except", "SELECT value FROM {small} EXCEPT SELECT name FROM t"),
    ("nested_derived", "SELECT * FROM (SELECT * FROM (SELECT * FROM {small}) a) b"),
    ("pivot", "PIVOT {small} ON key USING first(value)"),
    ("pivot_clause", "SELECT * FROM {small} PIVOT (first(value) FOR key IN ('password'))"),
    ("unpivot", "UNPIVOT {small} ON value INTO NAME k VALUE v"),
    ("values_join", "SELECT * FROM (VALUES (1)) v(x), {small}"),
    ("table_function_mix", "SELECT * FROM range(1), {small}"),
    ("unnest_subquery", "SELECT unnest((SELECT list(value) FROM {small}))"),
    ("array_subquery", "SELECT ARRAY(SELECT value FROM {large}) AS v"),
    # other statements and attached databases
    ("attach_memory", "ATTACH ':memory:' AS m"),
    ("use", "USE memory.main"),
    ("macro", "CREATE MACRO leak() AS TABLE SELECT * FROM {small}"),
    ("temp_macro_then_use", "CREATE TEMP MACRO x() AS 1; SELECT * FROM {small}"),
    ("set_search_path", "SET search_path = 'main'"),
    ("prepare", "PREPARE p AS SELECT * FROM {small}"),
    ("copy", "COPY {small} TO 'x.csv'"),
    ("export", "EXPORT DATABASE 'dump'"),
    ("second_statement", "SELECT 1; SELECT * FROM {small}"),
    ("comment_hidden", "SELECT 1 /* ; */ -- \n; SELECT * FROM {small}"),
]  # fmt: skip


def _query(template: str, world: dict[str, Any]) -> str:
    return template.format(small=world["small"], large=world["large"], SMALL=world["small"].upper())


def _text(value: object) -> str:
    return json.dumps(value, default=str)


def _assert_nothing_of_the_others(text: str, world: dict[str, Any]) -> None:
    """No secret cell, and not even the storage name of another table (the catalog)."""
    assert SECRET not in text
    assert world["small"] not in text and world["large"] not in text


def test_enough_cases() -> None:
    assert len(ISOLATION) >= 70


@pytest.mark.parametrize("template", [c[1] for c in ISOLATION], ids=[c[0] for c in ISOLATION])
def test_table_sql_sees_only_its_table(world: dict[str, Any], template: str) -> None:
    public = Table.from_records(["name", "score"], PUBLIC_ROWS)
    secret_frame = pd.DataFrame({"v": [SECRET]})  # noqa: F841 - bait for replacement scans
    query = _query(template, world)
    try:
        result = public.sql(query, timeout_s=2.0)
    except SQLError as error:
        assert SECRET not in str(error)
    else:
        _assert_nothing_of_the_others(_text(result.to_records()), world)
    assert public.sql("SELECT count(*) AS n FROM t").rows() == [["3"]]


@pytest.mark.parametrize("template", [c[1] for c in ISOLATION], ids=[c[0] for c in ISOLATION])
def test_run_sql_sees_only_its_tables(world: dict[str, Any], template: str) -> None:
    frame = pd.DataFrame({"name": ["Ann", "Bo", "Cy"], "score": [3, 1, 2]})
    secret_frame = pd.DataFrame({"v": [SECRET]})  # noqa: F841 - bait for replacement scans
    # an earlier query had the secret as one of its tables
    assert run_sql({"s": pd.DataFrame({"v": [SECRET]})}, "SELECT v FROM s").rows == [(SECRET,)]
    query = template.format(small="s", large="s", SMALL="S")
    try:
        result = run_sql({"t": frame}, query, LIMITS)
    except SQLError as error:
        assert SECRET not in str(error)
    else:
        assert SECRET not in _text(result.rows)
    assert run_sql({"t": frame}, "SELECT count(*) FROM t").rows == [(3,)]


@pytest.mark.parametrize("template", [c[1] for c in ISOLATION], ids=[c[0] for c in ISOLATION])
def test_text_to_sql_sees_only_its_table(world: dict[str, Any], template: str) -> None:
    public = Table.from_records(["name", "score"], PUBLIC_ROWS)
    query = _query(template, world)
    method = TextToSQL(ScriptedLLM(replies=[query]), patience=1, limits=LIMITS)
    prediction = method.run(public, "Who scored most?")
    assert SECRET not in _text(prediction.answer)
    assert SECRET not in (prediction.error or "")
    assert SECRET not in prediction.trace.to_json()
    assert SECRET not in json.dumps(prediction.checks())  # the query run again for its rows


@pytest.mark.parametrize("template", [c[1] for c in ISOLATION], ids=[c[0] for c in ISOLATION])
def test_the_worker_alone_contains_it(world: dict[str, Any], template: str) -> None:
    """The same queries with no guard at all: the worker's scope is the boundary."""
    small, _ = world["keep"]
    assert small.sql("SELECT value FROM t WHERE key = 'password'").rows() == [[SECRET]]
    public = [["Ann", "Bo", "Cy"], ["3", "1", "2"]]
    table = TableInput("t", lambda: {"columns": ["name", "score"], "cells": public})
    try:
        columns, rows, _ = execute([table], _query(template, world), LIMITS)
    except SQLError as error:
        assert SECRET not in str(error)
    else:
        _assert_nothing_of_the_others(_text([columns, rows]), world)
    assert execute([table], "SELECT count(*) FROM t", LIMITS)[1] == [(3,)]


def test_a_table_queried_first_is_not_visible_to_the_next(world: dict[str, Any]) -> None:
    small, _ = world["keep"]
    assert small.sql("SELECT value FROM t WHERE key = 'password'").rows() == [[SECRET]]
    public = Table.from_records(["name", "score"], PUBLIC_ROWS)
    for query in ("SELECT * FROM t", "SELECT * FROM t UNION ALL SELECT * FROM t"):
        assert SECRET not in _text(public.sql(query).to_records())


def test_legitimate_queries_still_work() -> None:
    public = Table.from_records(["name", "score"], PUBLIC_ROWS)
    assert public.sql(
        "WITH top AS (SELECT * FROM t ORDER BY CAST(score AS INT) DESC LIMIT 2) "
        "SELECT name FROM (WITH inner_cte AS (SELECT * FROM top) SELECT * FROM inner_cte)"
    ).rows() == [["Ann"], ["Cy"]]
    assert public.sql(
        "SELECT name, (SELECT max(CAST(score AS INT)) FROM t) AS top FROM t WHERE name = 'Bo'"
    ).rows() == [["Bo", "3"]]
    assert public.sql(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
        "SELECT count(*) AS c FROM r"
    ).rows() == [["3"]]


def test_concurrent_queries_each_see_their_own_table() -> None:
    from concurrent.futures import ThreadPoolExecutor

    tables = [Table.from_records(["owner"], [[f"table-{i}"]] * (i + 1)) for i in range(6)]

    def ask(i: int) -> list[list[str]]:
        query = "SELECT owner, count(*) AS n FROM t GROUP BY owner"
        return [row for _ in range(10) for row in tables[i].sql(query).rows()]

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(ask, range(6)))
    for i, rows in enumerate(results):
        assert rows == [[f"table-{i}", str(i + 1)]] * 10
