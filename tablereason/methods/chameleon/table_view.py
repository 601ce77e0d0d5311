"""The table as Chameleon's TabMWP prompts show it: whole when it fits, else a bounded view.

TabMWP's tables are small and every prompt shows them whole, as ``a | b`` lines. A
user's table can have any number of rows, so a table of more than ``view_rows`` lines
(the settings' bound; ``None`` shows every table whole, as the published code does) is
shown as the bounded view Chain-of-Table's large mode writes (row count, one line per
column with its type, range and frequent values, the first rows and the rows that
mention the question, each with its row number), followed by a line saying how many
rows there are and that a program reads them all as the DataFrame ``df``; programs
then get the whole table as ``df`` in the sandbox.

Example:
    >>> from tablereason.table import Table
    >>> table_text(Table.from_records(["Column 1", "Column 2"], [["a", "1"]]))
    'a | 1'
    >>> fits(Table.from_records(["n"], [[str(i)] for i in range(40)]), 30)
    False
"""

from __future__ import annotations

import re
from typing import Any

from tablereason.table.value import Table

_GENERIC = re.compile(r"^Column \d+$")


def has_header(table: Table) -> bool:
    """False for TabMWP's headerless tables (columns named ``Column 1``, ``Column 2``...)."""
    return not all(_GENERIC.match(c) for c in table.columns)


def table_text(table: Table) -> str:
    """The table in TabMWP's text form: ``a | b`` lines, the header first when it has one."""
    lines = [" | ".join(table.columns)] if has_header(table) else []
    lines += [" | ".join(row) for row in table.rows()]
    return "\n".join(lines)


def numbered(table: Table) -> str:
    """The table with numbered rows, as row lookup shows it."""
    lines = [f"header : {' | '.join(table.columns)}"] if has_header(table) else []
    lines += [f"row {i} : {' | '.join(row)}" for i, row in enumerate(table.rows(), 1)]
    return "\n".join(lines)


def fits(table: Table, view_rows: int | None) -> bool:
    """Whether ``table`` is shown whole: no bound, or small in every direction.

    Small means at most ``view_rows`` lines, at most the view's number of columns
    (:data:`~tablereason.methods.chain_of_table.large_view.VIEW_COLUMNS`) and no cell
    longer than the view's cut (``CELL_CHARS``); any other table gets the bounded view.
    """
    if view_rows is None:
        return True
    from tablereason.methods.chain_of_table.large_view import CELL_CHARS, VIEW_COLUMNS

    if table.num_rows + (1 if has_header(table) else 0) > view_rows:
        return False
    if len(table.columns) > VIEW_COLUMNS:
        return False
    cells = [*table.columns, *(c for row in table.rows() for c in row)]
    return all(len(c) <= CELL_CHARS for c in cells)


def bounded_view(table: Table, question: str, view_rows: int) -> str:
    """The bounded view of a table too large to show, and the line about the rest.

    Example:
        >>> big = Table.from_records(["n"], [[str(i)] for i in range(100)])
        >>> print(bounded_view(big, "what is n?", 8).splitlines()[-1])
        (The table has 100 rows; the 7 above are some of them. A program reads every row as the pandas DataFrame df.)
    """  # noqa: E501
    from tablereason.methods.chain_of_table.large_view import view_text

    view = view_text(table, question, caption=None, budget=view_rows)
    shown = sum(1 for line in view.splitlines() if line.startswith("row "))
    if shown < table.num_rows:
        rows = f"the {shown} above are some of them"
    else:
        rows = "all of them are above, some cells or columns cut"
    return (
        f"{view}\n(The table has {table.num_rows} rows; {rows}. "
        "A program reads every row as the pandas DataFrame df.)"
    )


def shown(table: Table, question: str, view_rows: int | None, *, rows: bool = False) -> str:
    """The table as a prompt shows it: whole (``rows``: numbered) when it fits, else bounded.

    Example:
        >>> print(shown(Table.from_records(["a"], [["x"], ["y"]]), "which?", 30, rows=True))
        header : a
        row 1 : x
        row 2 : y
    """
    if fits(table, view_rows):
        return numbered(table) if rows else table_text(table)
    assert view_rows is not None  # fits() is true without a bound
    return bounded_view(table, question, view_rows)


def program_inputs(table: Table, view_rows: int | None) -> dict[str, Any] | None:
    """What a program gets: nothing for a table shown whole, else the whole table as ``df``.

    Example:
        >>> big = Table.from_records(["n"], [[str(i)] for i in range(40)])
        >>> int(program_inputs(big, 30)["df"]["n"].sum()), program_inputs(big, None)
        (780, None)
    """
    if fits(table, view_rows):
        return None
    from tablereason.tools.python_tool import frame

    return {"df": frame(table)}
