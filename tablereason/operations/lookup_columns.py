"""lookup_columns: keep columns whose name matches some terms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from tablereason.operations.catalog import OperationArgs, operation
from tablereason.operations.select_columns import project
from tablereason.table.lineage import KEPT, Step

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


class LookupColumnsArgs(OperationArgs):
    """Terms to match against column names."""

    terms: list[str] = Field(default_factory=list)


def name_matches(name: str, term: str) -> bool:
    """True when the name and the term contain one another, ignoring case and spaces."""
    a, b = " ".join(name.lower().split()), " ".join(term.lower().split())
    return bool(a and b) and (a in b or b in a)


@operation(
    "lookup_columns",
    LookupColumnsArgs,
    "keep the columns whose name matches one of the terms; the table is unchanged if none does",
    lineage=KEPT,
)
def lookup_columns(table: Table, args: LookupColumnsArgs) -> Table:
    """Keep the columns whose name matches a term.

    A name matches when it contains the term or is contained in it, ignoring
    case. When no column matches, every column is kept: a table needs at least
    one column, and callers use this as a fallback.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["Name", "Birth year", "Team"], [["a", "1", "x"]])
        >>> t.lookup_columns(["year", "name"]).columns
        ['Name', 'Birth year']
    """
    refs = table.kernel.refs
    positions = [i for i, c in enumerate(refs) if any(name_matches(c.name, t) for t in args.terms)]
    detail = {} if positions else {"fallback": "no column matched; all kept"}
    positions = positions or list(range(len(refs)))
    return table.kernel.derive(
        Step(operation="lookup_columns", args=args, detail=detail),
        columns=[refs[i] for i in positions],
        records=project(table, positions),
    )
