from __future__ import annotations

import pandas as pd
import pytest

from tablereason.errors import SQLError
from tablereason.sandbox import SQLLimits, check_query, run_sql
from tablereason.sandbox.sql import SQLGuardError

TABLE = pd.DataFrame(
    {"Nation": ["Norway", "Sweden", "Chile"], "Gold medals": [3, 5, 1], "": ["a", "b", "c"]}
)


def test_select_over_a_single_table_named_t() -> None:
    result = run_sql(TABLE, 'SELECT "Nation" FROM t ORDER BY "Gold medals" DESC LIMIT 1')
    assert result.rows == [("Sweden",)]
    assert result.columns == ["Nation"]


def test_mapping_of_tables_and_join() -> None:
    capitals = pd.DataFrame({"Nation": ["Norway", "Chile"], "Capital": ["Oslo", "Santiago"]})
    query = (
        'SELECT c."Capital" FROM medals m JOIN capitals c ON m."Nation" = c."Nation" '
        'WHERE m."Gold medals" > 2'
    )
    assert run_sql({"medals": TABLE, "capitals": capitals}, query).rows == [("Oslo",)]


def test_ctes_and_set_operations_are_allowed() -> None:
    query = 'WITH g AS (SELECT "Gold medals" AS n FROM t) SELECT sum(n) FROM g'
    assert run_sql(TABLE, query).rows == [(9,)]
    assert run_sql(TABLE, "SELECT 1 AS x UNION ALL SELECT 2").rows == [(1,), (2,)]


def test_table_names_are_case_insensitive() -> None:
    assert run_sql({"T": TABLE}, "SELECT count(*) FROM t").rows == [(3,)]


def test_object_with_to_pandas_is_accepted() -> None:
    class FakeTable:
        def to_pandas(self) -> pd.DataFrame:
            return TABLE

    assert run_sql(FakeTable(), "SELECT count(*) AS n FROM t").to_pandas()["n"].tolist() == [3]


def test_rows_are_capped() -> None:
    big = pd.DataFrame({"x": list(range(50))})
    result = run_sql(big, "SELECT x FROM t", SQLLimits(max_rows=10))
    assert len(result.rows) == 10 and result.truncated


def test_unknown_table_names_what_exists() -> None:
    with pytest.raises(SQLGuardError, match="unknown table 'medals'; the query may read only: t"):
        run_sql(TABLE, "SELECT * FROM medals")


def test_duckdb_errors_become_sql_errors() -> None:
    with pytest.raises(SQLError, match="the query failed"):
        run_sql(TABLE, "SELECT nope FROM t")


def test_parse_errors_are_guard_errors() -> None:
    with pytest.raises(SQLGuardError, match="does not parse"):
        check_query("SELEC * FROM", ["t"])


def test_what_runs_is_regenerated_from_the_tree() -> None:
    result = run_sql(TABLE, "select count(*) as n from t -- trailing comment")
    assert result.sql == "SELECT COUNT(*) AS n FROM t"
