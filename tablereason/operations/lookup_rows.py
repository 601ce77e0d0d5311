"""lookup_rows: keep rows that mention any of some terms."""

from __future__ import annotations

from functools import reduce

import numpy as np
from pydantic import Field
from sqlglot import exp

from tablereason.errors import TableError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.storage import POS, RID
from tablereason.table import Step, Table


class LookupRowsArgs(OperationArgs):
    """Terms to look for, and optionally the columns to search (default: all)."""

    terms: list[str] = Field(default_factory=list)
    columns: list[str] | None = None


@operation(
    "lookup_rows",
    LookupRowsArgs,
    "keep the rows where some cell contains one of the terms (case-insensitive)",
)
def lookup_rows(table: Table, args: LookupRowsArgs) -> Table:
    """Keep rows where a cell contains one of the terms, ignoring case.

    Only ``args.columns`` are searched when given. No match gives a table with
    no rows.

    Raises:
        TableError: If every term is empty.

    Example:
        >>> t = Table.from_records(["city"], [["Paris"], ["Rome"], ["Parma"]])
        >>> t.lookup_rows(["par"]).rows()
        [['Paris'], ['Parma']]
    """
    terms = [t.strip().lower() for t in args.terms if t.strip()]
    if not terms:
        raise TableError("lookup_rows needs at least one non-empty term")
    names = [table.column(c).name for c in args.columns] if args.columns else table.columns
    with table._scan() as scan:
        tests = [
            exp.func("contains", exp.func("lower", scan.cell(name)), exp.Literal.string(term))
            for name in names
            for term in terms
        ]
        query = (
            scan.select(scan.rid, exp.alias_(scan.pos, POS))
            .where(reduce(lambda a, b: exp.or_(a, b), tests))
            .order_by(scan.pos)
        )
        found = table._store.fetch_numpy(query)
    rows = np.asarray(found[RID], dtype=np.int64)
    return table._derive(Step(operation="lookup_rows", args=args), rows=rows)
