"""text_to_sql takes whole statements out of a reply, never a query out of another statement.

A reply whose statement is not one SELECT (``CREATE VIEW t AS SELECT ...``, a ``COPY``
followed by a SELECT, two SELECTs, a statement behind a comment, a carriage return or a
NUL byte) must be refused as ``Table.sql`` refuses the same text, not answered with the
SELECT found inside it. Each hostile statement is put around the same query in every
way below, inside and outside code fences; the scripted model repeats the reply, and the
answer must never be the query's. Replies a small model writes around one query (prose,
fences, comments, a trailing explanation) are still answered.
"""

from __future__ import annotations

import pytest

from tablereason.errors import SQLError
from tablereason.llm import ScriptedLLM
from tablereason.methods.baselines import TextToSQL
from tablereason.methods.code_extraction import extract_sql
from tablereason.sandbox import SQLLimits, run_sql
from tablereason.table import Table

TABLE = Table.from_records(["name", "score"], [["Ann", "3"], ["Bo", "1"]])
LIMITS = SQLLimits(seconds=2.0, memory="256MB")
QUERY = "SELECT 'pwned' AS x"
OTHERS = [
    "CREATE OR REPLACE VIEW t AS", "CREATE TABLE x AS", "CREATE TEMP TABLE x AS",
    "CREATE VIEW v AS", "CREATE MACRO m() AS TABLE", "INSERT INTO t", "COPY (SELECT 1) TO 'x.csv';",
    "COPY t TO '/tmp/x.csv';", "DROP TABLE t;", "ATTACH 'x.db' AS x;", "PRAGMA version;",
    "SET threads = 1;", "INSTALL httpfs;", "LOAD httpfs;", "EXPORT DATABASE '/tmp/x';",
    "CALL pragma_version();", "EXPLAIN", "SELECT 2;", "DESCRIBE", "SUMMARIZE", "PIVOT t ON name;",
]  # fmt: skip


def _hostile() -> list[str]:
    replies: list[str] = []
    for other in OTHERS:
        bare = other.rstrip(";")
        replies += [
            f"{other} {QUERY}",
            f"{bare}; {QUERY}",
            f"{QUERY}; {bare}",
            f"{bare}\n{QUERY}",
            f"{QUERY}\n{bare}",
            f"{bare} -- note\n{QUERY}",
            f"{bare}; -- note\n{QUERY}",
            f"-- note\r{bare};\n{QUERY}",
            f"{QUERY} -- note\n; {bare}",
            f"{bare} /* note */ {QUERY}",
            f"/* note */ {bare};\n{QUERY}",
            *([f"/* {QUERY} */ {bare}"] if bare != "SELECT 2" else []),  # else one SELECT
            f"{bare}\r{QUERY}",
            f"{bare}\r\n{QUERY}",
            f"{bare}\x00{QUERY}",
            f"{bare};\x00{QUERY}",
            f"# {bare}\x00{QUERY};",
            f"{QUERY}\u2028{bare}",
            f"Here it is:\n```sql\n{bare};\n{QUERY}\n```",
            f"```sql\n{bare}\n```\n```sql\n{QUERY}\n```",
            f"{bare};\n```sql\n{QUERY}\n```",
            f"The query is `{bare}` then `{QUERY}`.",
        ]
    return replies


HOSTILE = _hostile()


def test_the_battery_is_large() -> None:
    assert len(HOSTILE) >= 400


def _refused_by_table_sql(text: str) -> bool:
    try:
        TABLE.sql(text, timeout_s=2.0)
    except SQLError:
        return True
    return False


@pytest.mark.parametrize("reply", HOSTILE)
def test_a_reply_holding_more_than_one_select_is_refused(reply: str) -> None:
    query = extract_sql(reply, prefix="SELECT")
    with pytest.raises(SQLError):
        run_sql({"t": TABLE.to_pandas()}, query, LIMITS)
    assert _refused_by_table_sql(query)


@pytest.mark.parametrize("reply", HOSTILE[::7])
def test_text_to_sql_does_not_answer_it(reply: str) -> None:
    method = TextToSQL(ScriptedLLM(replies=[reply] * 2), patience=2, limits=LIMITS)
    prediction = method.run(TABLE, "who scored most?")
    assert prediction.answer != ["pwned"]
    assert prediction.error


BENIGN = [
    (" \"name\" FROM t ORDER BY CAST(score AS INT) DESC LIMIT 1", ["Ann"]),
    ("SELECT name FROM t WHERE score = '1'", ["Bo"]),
    ("Sure! Here it is:\n```sql\nSELECT name -- the name\nFROM t /* all */ WHERE score = '3';\n```"
     "\nThis returns Ann.", ["Ann"]),
    ("# The previous attempt failed\nSELECT name FROM t WHERE score = '3';\nIt is Ann.", ["Ann"]),
    ("\nWITH s AS (SELECT * FROM t) SELECT name FROM s WHERE score = '1'", ["Bo"]),
    ("The query is `SELECT name FROM t WHERE score = '1'`.", ["Bo"]),
    (" name FROM t WHERE name LIKE '%;%' OR score = '1'", ["Bo"]),
    ("SELECT name FROM t WHERE score = '1'\r\nThis is Bo.", ["Bo"]),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "answer"), BENIGN)
def test_one_query_in_prose_is_still_answered(reply: str, answer: list[str]) -> None:
    method = TextToSQL(ScriptedLLM(replies=[reply]), patience=1, limits=LIMITS)
    prediction = method.run(TABLE, "who?")
    assert prediction.answer == answer, prediction.error
