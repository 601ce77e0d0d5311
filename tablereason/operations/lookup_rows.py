"""lookup_rows: keep rows that mention any of some terms.

Matching ignores case the way DuckDB's ``lower()`` does: one code point at a
time (simple case mapping), so "İ" becomes "i" and a final "Σ" becomes "σ".
:func:`fold` is that mapping in Python; it folds the terms on both paths and the
cells of small tables, which are searched in Python.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field
from sqlglot import exp

from tablereason.errors import TableError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.table.lineage import Lineage, Refs, Step, kept_cells, parent_positions
from tablereason.table.storage import RID

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

_JOIN = "\x1f"
_SEPARATOR = re.compile("[\x1f]")
# Where Python's str.lower() differs from a per-code-point lowering: the full
# mapping of U+0130 and the final-sigma rule.
_SIMPLE_LOWER = str.maketrans({"\u0130": "i", "\u03a3": "\u03c3"})


def fold(text: str) -> str:
    """Lower-case ``text`` one code point at a time, as DuckDB's ``lower()`` does.

    Example:
        >>> fold("İSTANBUL ΟΔΟΣ")
        'istanbul οδοσ'
    """
    if "\u0130" in text or "\u03a3" in text:
        text = text.translate(_SIMPLE_LOWER)
    return text.lower()


class LookupRowsArgs(OperationArgs):
    """Terms to look for, and optionally the columns to search (default: all)."""

    terms: list[str] = Field(default_factory=list)
    columns: list[str] | None = None


def _matched_cells(child: Table, rows: np.ndarray, tags: np.ndarray) -> Refs:
    """The cells that kept these rows of ``child``: those of its rows that mention a term."""
    refs = Refs()
    args = child.step.args if child.step is not None else None
    if child.parent is None or not isinstance(args, LookupRowsArgs):
        return refs
    terms = [t for t in (fold(_SEPARATOR.sub("", t).strip()) for t in args.terms) if t]
    names = [child.column(c).name for c in args.columns] if args.columns else child.columns
    kernel = child.kernel
    cells = kernel.cells()
    at = parent_positions(child, rows)
    for name in names:
        if cells is not None:
            i = kernel.position(name)
            hit = np.asarray([_mentions(fold(cells[r][i]), terms) for r in rows.tolist()], bool)
        else:
            with kernel.scan() as scan:
                lowered = exp.func("lower", scan.cell(name))
                tests = [exp.func("contains", lowered.copy(), exp.Literal.string(t)) for t in terms]
                condition: exp.Expr = tests[0]
                for test in tests[1:]:
                    condition = exp.or_(condition, test, copy=False)
                query = scan.select(exp.alias_(scan.pos, "p")).where(condition, copy=False)
                hit = np.isin(rows, kernel.store.fetch_numpy(query)["p"])
        refs.add(name, at[hit], tags[hit])
    return refs


@operation(
    "lookup_rows",
    LookupRowsArgs,
    "keep the rows where some cell contains one of the terms (case-insensitive)",
    lineage=Lineage(
        kept_cells,
        "each kept cell maps to itself; a kept row rests on its cells that mention a term",
        decided_by=_matched_cells,
    ),
)
def lookup_rows(table: Table, args: LookupRowsArgs) -> Table:
    """Keep rows where a cell contains one of the terms, ignoring case.

    Only ``args.columns`` are searched when given. No match gives a table with
    no rows.

    Raises:
        TableError: If every term is empty.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["city"], [["Paris"], ["Rome"], ["Parma"]])
        >>> t.lookup_rows(["par"]).rows()
        [['Paris'], ['Parma']]
    """
    terms = [fold(_SEPARATOR.sub("", t).strip()) for t in args.terms]
    terms = [t for t in terms if t]
    if not terms:
        raise TableError("lookup_rows needs at least one non-empty term")
    names = [table.column(c).name for c in args.columns] if args.columns else table.columns
    step = Step(operation="lookup_rows", args=args)
    kernel = table.kernel
    cells = kernel.cells()
    if cells is not None:
        positions = [kernel.position(n) for n in names]
        hits = [
            i
            for i, row in enumerate(cells)
            if _mentions(fold(_JOIN.join([row[p] for p in positions])), terms)
        ]
        rows = kernel.row_ids()[np.asarray(hits, dtype=np.int64)]
        return kernel.derive(step, rows=rows, records=[cells[i] for i in hits])
    with kernel.scan() as scan:
        # One lowered string per row, cells joined by a control character that no
        # term contains, so a match never spans two cells.
        text = exp.func(
            "lower",
            exp.func("concat_ws", exp.Literal.string(_JOIN), *(scan.cell(n) for n in names)),
        )
        tests = [exp.func("contains", text, exp.Literal.string(term)) for term in terms]
        condition: exp.Expr = tests[0]
        for test in tests[1:]:
            condition = exp.or_(condition, test, copy=False)
        query = scan.select(scan.rid).where(condition, copy=False).order_by(scan.pos, copy=False)
        found = kernel.store.fetch_numpy(query)
    rows = np.asarray(found[RID], dtype=np.int64)
    return kernel.derive(step, rows=rows)


def _mentions(text: str, terms: list[str]) -> bool:
    return any(term in text for term in terms)
