"""Several named tables asked about together: :class:`TableSet`.

A question over ``{"flights": flights, "airlines": airlines}`` goes to the methods that
can read several tables (``text_to_sql`` joins them in the SQL worker, which holds those
tables and nothing else; ``program_of_thought`` gets one DataFrame per table). A
:class:`TableSet` is that mapping, its names checked: each is a Python identifier (so
a program can use it as a variable and a query as a table name), used once ignoring
case. :meth:`TableSet.describe` is the text prompts show of them.

Example:
    >>> from tablereason.table import Table
    >>> tables = TableSet({"a": Table.from_records(["k", "n"], [["x", "1"]]),
    ...                    "b": Table.from_records(["k"], [["x"]])})
    >>> print(tables.describe(max_rows=5))
    Table a (1 row):
    col : k | n
    row 1 : x | 1
    Columns of a: "k" text, "n" integer
    <BLANKLINE>
    Table b (1 row):
    col : k
    row 1 : x
    Columns of b: "k" text
"""

from __future__ import annotations

import keyword
from collections.abc import Iterator, Mapping

from sqlglot import exp

from tablereason.errors import ConfigurationError
from tablereason.table.value import Table

MAX_TABLES = 16
"""Most tables one question may name."""


class TableSet(Mapping[str, Table]):
    """Named tables, in the order given; a read-only mapping of name to :class:`Table`.

    Raises:
        ConfigurationError: For no table, more than :data:`MAX_TABLES`, a name that is
            not an identifier (or is a Python keyword), a name used twice ignoring case,
            or a value that is not a :class:`Table`.
    """

    def __init__(self, tables: Mapping[str, Table]) -> None:
        if not tables:
            raise ConfigurationError("give at least one table: {'name': table, ...}")
        if len(tables) > MAX_TABLES:
            raise ConfigurationError(f"{len(tables)} tables given; at most {MAX_TABLES} are taken")
        seen: dict[str, str] = {}
        for name, table in tables.items():
            if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
                raise ConfigurationError(
                    f"table name {name!r} is not a plain name; use letters, digits and _ "
                    "(not starting with a digit), e.g. 'flights'"
                )
            if name.casefold() in seen:
                raise ConfigurationError(
                    f"table names {seen[name.casefold()]!r} and {name!r} differ only in case"
                )
            if not isinstance(table, Table):
                raise ConfigurationError(
                    f"table {name!r} is a {type(table).__name__}; load it first (load_table)"
                )
            seen[name.casefold()] = name
        self._tables = dict(tables)

    def __getitem__(self, name: str) -> Table:
        return self._tables[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{n}: {t.num_rows}x{len(t.columns)}" for n, t in self.items())
        return f"<TableSet {shapes}>"

    def describe(self, max_rows: int | None = 20) -> str:
        """Each table as prompts show it: its rows, then its columns and their types.

        At most ``max_rows`` rows of each; the columns are written as SQL names.
        """
        blocks = []
        for name, table in self.items():
            rows = "row" if table.num_rows == 1 else "rows"
            types = table.types
            columns = ", ".join(
                f"{exp.to_identifier(c, quoted=True).sql(dialect='duckdb')} {types[c]}"
                for c in table.columns
            )
            blocks.append(
                f"Table {name} ({table.num_rows} {rows}):\n"
                f"{table.to_pipe(max_rows=max_rows, caption=False)}\n"
                f"Columns of {name}: {columns}"
            )
        return "\n\n".join(blocks)
