"""The SQL tool: one guarded, read-only SELECT over the user's tables, run in the SQL worker.

The input is a query in DuckDB's dialect (a code fence or a trailing ``;`` is allowed).
It goes through :func:`tablereason.sandbox.sql.run_sql`: the sqlglot guard accepts one
SELECT over the tables the tool was given and nothing else, and the query runs in a
worker process that holds exactly those tables, under time, memory and row limits. The
observation is the result as ``col | col`` lines, at most ``max_rows`` rows with a line
saying how many there were. A refused or failing query comes back as a "No evidence
found" observation with the reason, so the model can write another.

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["species", "mass"], [["Adelie", "3750"], ["Gentoo", "5000"]])
    >>> tool = SQLTool(t)
    >>> print(tool("SELECT count(*) AS n FROM t WHERE species = 'Adelie'"))
    n
    1
    >>> tool("DROP TABLE t").startswith("No evidence found: ")
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from tablereason.errors import ConfigurationError, SQLError
from tablereason.llm.base import Usage
from tablereason.sandbox.sql import DEFAULT_TABLE_NAME, SQLLimits, run_sql
from tablereason.table.value import Table
from tablereason.tools.base import BaseTool, ToolFailure

MAX_ROWS = 20
"""Result rows shown in an observation."""
CELL_CHARS = 60
"""Characters of one cell shown in an observation."""

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def strip_code(text: str) -> str:
    r"""A tool input without surrounding code fences, backticks or final ``;``.

    Example:
        >>> strip_code("```sql\nSELECT 1;\n```"), strip_code("`SELECT 2`")
        ('SELECT 1', 'SELECT 2')
    """
    code = _FENCE.sub("", text.strip()).strip()
    if len(code) > 1 and code.startswith("`") and code.endswith("`"):
        code = code[1:-1].strip()
    return code.rstrip("; \t\r\n")


def named_tables(tables: Table | Mapping[str, Table], single: str) -> dict[str, Table]:
    """The tables by the names a tool shows: one table is called ``single``.

    Raises:
        ConfigurationError: For no table, or a value that is not a :class:`Table`.

    Example:
        >>> t = Table.from_records(["a"], [["1"]])
        >>> list(named_tables(t, "t")), list(named_tables({"x": t, "y": t}, "t"))
        (['t'], ['x', 'y'])
    """
    named = {single: tables} if isinstance(tables, Table) else dict(tables)
    if not named:
        raise ConfigurationError("the tool needs at least one table")
    for name, table in named.items():
        if not isinstance(table, Table):
            raise ConfigurationError(
                f"table {name!r} is a {type(table).__name__}; load it first (load_table)"
            )
    return named


def _cell(value: Any) -> str:
    text = "NULL" if value is None else " ".join(str(value).split())
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def result_text(columns: list[str], rows: list[tuple[Any, ...]], max_rows: int, more: bool) -> str:
    """Result rows as observation lines: the header, then at most ``max_rows`` rows.

    Example:
        >>> print(result_text(["a", "b"], [(1, None), (2, "x")], 1, False))
        a | b
        1 | NULL
        (2 rows; the first 1 shown)
    """
    lines = [" | ".join(_cell(c) for c in columns)]
    lines += [" | ".join(_cell(v) for v in row) for row in rows[:max_rows]]
    if not rows:
        lines.append("(no rows)")
    elif len(rows) > max_rows or more:
        count = f"more than {len(rows)}" if more else str(len(rows))
        lines.append(f"({count} rows; the first {min(max_rows, len(rows))} shown)")
    return "\n".join(lines)


class TablesTool(BaseTool):
    """A tool over named tables: one table gets the name :attr:`single`.

    Subclasses set :attr:`single` and :attr:`about`, the description with ``{names}``
    where the tables' names go.
    """

    single: ClassVar[str]
    about: ClassVar[str]

    def __init__(self, tables: Table | Mapping[str, Table], name: str | None) -> None:
        self.tables = named_tables(tables, self.single)
        if name:
            self.name = name
        self.description = self.about.format(names=", ".join(self.tables))


class SQLTool(TablesTool):
    """Run one read-only SELECT over the given tables, in the SQL worker.

    Args:
        tables: One table (named ``t`` in the query) or several by name.
        limits: Time, memory and row limits of each query.
        max_rows: Result rows shown in the observation.
        name: Tool name shown to the model.
    """

    name = "SQL"
    single = DEFAULT_TABLE_NAME
    about = (
        "Runs one read-only SQL SELECT (DuckDB dialect) over the table(s) {names} and "
        "returns the result rows. Input: the query, on one line."
    )

    def __init__(
        self,
        tables: Table | Mapping[str, Table],
        *,
        limits: SQLLimits | None = None,
        max_rows: int = MAX_ROWS,
        name: str | None = None,
    ) -> None:
        super().__init__(tables, name)
        self.limits = limits or SQLLimits()
        self.max_rows = max(1, max_rows)

    def run(self, text: str) -> tuple[str, Usage]:
        """Check and run the query; the result rows as text."""
        query = strip_code(text)
        if not query:
            raise ToolFailure("the input holds no query")
        try:
            result = run_sql(self.tables, query, self.limits)
        except SQLError as error:
            reason = str(error)  # DuckDB's errors already say the query failed
            prefix = "" if reason.startswith("the query failed") else "the query failed: "
            raise ToolFailure(prefix + reason) from None
        text = result_text(result.columns, list(result.rows), self.max_rows, result.truncated)
        return text, Usage(requests=0)
