"""The input rows behind a Text-to-SQL result: its query run again with row numbers.

Text-to-SQL answers with the first column of its query's result, which says nothing
about the rows it read. :func:`query_rows` runs the query once more in the SQL
sandbox, rewritten to carry a row-number column of ``t`` through to its result
(:func:`~tablereason.table.sql_rows.with_row_numbers`), and returns what the
evidence needs: for each answered result row, the input rows it came from, and which
input columns the answer's column and the conditions read. The method records it in
its query step (``arguments["source_rows"]``); a query that cannot be followed (a
join, ``WITH``) records why instead. At most :data:`MAX_ROW_NUMBERS` row numbers are
kept per result row.

Example:
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"team": ["x", "y", "x"], "pts": ["3", "1", "2"]})
    >>> query_rows(frame, "SELECT team FROM t WHERE pts > '1' ORDER BY pts", ["x", "x"])
    {'rows': [[2], [0]], 'reads': [0], 'condition': [1]}
"""

from __future__ import annotations

from typing import Any

from tablereason.errors import SQLError
from tablereason.sandbox.sql import SQLLimits, run_sql
from tablereason.table.sql_rows import with_row_numbers

MAX_ROW_NUMBERS = 10_000
"""Most input rows recorded for one result row (a count over more keeps the first)."""


def query_rows(
    frame: Any, query: str, answer: list[str], limits: SQLLimits | None = None
) -> dict[str, Any]:
    """The input rows behind each answered result row of ``query`` over ``frame`` (as ``t``).

    Args:
        frame: The table the query ran on, as the pandas DataFrame it was given.
        query: The query.
        answer: The answer read from its result (one text per answered row), which the
            query run again must give again.
        limits: The SQL limits the query ran under.

    Returns:
        ``{"rows": [[row, ...] per answered result row], "reads": [column indices the
        answer's column reads], "condition": [column indices the conditions read]}``,
        or ``{"unavailable": why}``.
    """
    columns = [str(c) for c in frame.columns]
    row_column = "__row"
    while row_column in columns:
        row_column += "_"
    rewritten = with_row_numbers(query, columns, row_column)
    if isinstance(rewritten, str):
        return {"unavailable": rewritten}
    numbered = frame.assign(**{row_column: range(len(frame))})
    try:
        result = run_sql({"t": numbered}, rewritten.sql, limits)
    except SQLError as error:
        return {"unavailable": f"the query could not be run again with row numbers: {error}"}
    rows, again = [], []
    for row in result.rows:
        if not row or row[0] is None:
            continue  # the answer skips these rows too
        again.append(row[0])
        numbers = row[-1] if rewritten.grouped else [row[-1]]
        rows.append([int(n) for n in (numbers or [])[:MAX_ROW_NUMBERS]])
    if [_text(v) for v in again] != [_text(v) for v in answer]:
        return {"unavailable": "the query returned other rows when run again with row numbers"}
    index = {c: i for i, c in enumerate(columns)}
    reads = rewritten.reads[0] if rewritten.reads else []
    return {
        "rows": rows,
        "reads": [index[c] for c in reads],
        "condition": [index[c] for c in rewritten.condition],
    }


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
