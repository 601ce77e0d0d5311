"""sort_by: stable sort on one column, numeric or textual.

Small tables are sorted in Python over the cells already held, large ones in
DuckDB; both read numbers, trim text and decide "numeric" identically (the
property tests compare them on random tables).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from tablereason.operations.catalog import OperationArgs, operation
from tablereason.table.kernel import RID, fill, template
from tablereason.table.lineage import KEPT, Step

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

# The number a cell holds, read the way Chain-of-Table reads it: keep the ASCII
# digits and the first dot, prefix a minus when the trimmed cell starts with one;
# a cell left with nothing (or only a dot) has no number (NULL).
_DIGITS = template(
    "CASE WHEN strpos(:d, '.') = 0 THEN :d "
    "ELSE substr(:d, 1, strpos(:d, '.')) || replace(substr(:d, strpos(:d, '.') + 1), '.', '') END"
)
# Whitespace as Python's str.strip() sees it, in RE2 syntax.
_WS = (
    r"[\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}"
    r"\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"
)
_NUMBER = template(
    "TRY_CAST(CASE WHEN regexp_matches(:cell, :leading_minus) THEN '-' ELSE '' END"
    " || :kept AS DOUBLE)"
)
_KEEP = template("regexp_replace(:cell, '[^0-9.]', '', 'g')")
_TRIMMED = template("NULLIF(regexp_replace(:cell, :edges, '', 'g'), '')")
# A cell that looks like one number, with at most a short prefix (currency) or suffix (unit).
_LOOKS_NUMERIC = template(
    "regexp_matches(:cell, '^\\s*[-+]?\\D{0,3}\\s*\\d[\\d,]*(\\.\\d+)?\\s*[^\\d]{0,12}$')"
)
AUTO_NUMERIC_SHARE = 0.8

# The same readings in Python. RE2's \s is [\t\n\f\r ] and its $ matches only at
# the very end, hence the explicit class and fullmatch.
_NOT_KEPT = re.compile(r"[^0-9.]")
_SPACE = r"[\t\n\f\r ]"
_LOOKS_NUMERIC_TEXT = re.compile(
    rf"{_SPACE}*[-+]?[^0-9]{{0,3}}{_SPACE}*[0-9][0-9,]*(?:\.[0-9]+)?{_SPACE}*[^0-9]{{0,12}}"
)


def read_number(cell: str) -> float | None:
    """The number in a cell as Chain-of-Table reads it, or ``None`` (see module notes).

    Example:
        >>> read_number(" -1,200.5 m."), read_number("n/a")
        (-1200.5, None)
    """
    kept = _NOT_KEPT.sub("", cell)
    dot = kept.find(".")
    if dot >= 0:
        kept = kept[: dot + 1] + kept[dot + 1 :].replace(".", "")
    if cell.strip().startswith("-"):
        kept = "-" + kept
    try:
        return float(kept)
    except ValueError:
        return None


def looks_numeric(cell: str) -> bool:
    """True when the cell looks like one number, perhaps with a short prefix or unit."""
    return _LOOKS_NUMERIC_TEXT.fullmatch(cell) is not None


def number_expression(cell: exp.Expr, digits: exp.Expr | None = None) -> exp.Expr:
    """SQL for the number in a cell, or NULL when it holds none (see module notes).

    ``digits``, when given, refers to the cell's digits and dots already
    extracted (``digits_expression``), so the extraction runs once per row.
    """
    kept = fill(_DIGITS, d=digits if digits is not None else digits_expression(cell))
    return fill(_NUMBER, cell=cell, kept=kept, leading_minus=exp.Literal.string(f"^{_WS}*-"))


def digits_expression(cell: exp.Expr) -> exp.Expr:
    """SQL for the digits and dots of a cell, in order."""
    return fill(_KEEP, cell=cell)


def trimmed_expression(cell: exp.Expr) -> exp.Expr:
    """SQL for the cell without surrounding whitespace, or NULL when nothing is left."""
    return fill(_TRIMMED, cell=cell, edges=exp.Literal.string(f"^{_WS}+|{_WS}+$"))


class SortByArgs(OperationArgs):
    """Column, direction, and whether to read cells as numbers (``None``: decide)."""

    column: str
    descending: bool = False
    numeric: bool | None = None


@operation(
    "sort_by",
    SortByArgs,
    "sort the rows by one column, ascending or descending",
    lineage=KEPT,
)
def sort_by(table: Table, args: SortByArgs) -> Table:
    """Sort rows by ``args.column``; ties and cells without a key keep their order.

    With ``numeric`` true, each cell's number is read as in Chain-of-Table (digits
    and the first dot, a leading minus); otherwise cells compare as trimmed text.
    Cells without a key (no number, or empty text) go last in their original
    order. ``numeric=None`` reads numbers when at least 80% of the non-empty cells
    look like one number, and records the decision in the step's ``detail``.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["n"], [["10"], ["9"], ["x"], ["-1"]])
        >>> [r[0] for r in t.sort_by("n", numeric=True).rows()]
        ['-1', '9', '10', 'x']
    """
    name = table.column(args.column).name
    kernel = table.kernel
    cells = kernel.cells()
    if cells is not None:
        return _sort_held(table, args, cells, kernel.position(name))
    detail: dict[str, object] = {}
    with kernel.scan() as scan:
        cell = scan.cell(name)
        numeric = args.numeric
        if numeric is None:
            numeric, detail = _decide_numeric(table, scan, cell)
        # Inner query: one row per table row with what the key needs, computed once.
        inner = scan.select(
            exp.alias_(scan.rid, "rid"),
            exp.alias_(scan.pos, "pos"),
            exp.alias_(cell, "cell"),
            exp.alias_(digits_expression(cell) if numeric else trimmed_expression(cell), "k"),
        )
        key = number_expression(exp.column("cell"), exp.column("k")) if numeric else exp.column("k")
        query = (
            exp.select(exp.alias_(exp.column("rid"), RID), copy=False)
            .from_(
                exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("s"))),
                copy=False,
            )
            .order_by(
                exp.Ordered(this=key, desc=args.descending, nulls_first=False),
                exp.column("pos"),
                copy=False,
            )
        )
        rids = kernel.store.fetch_numpy(query)[RID]
    step = Step(
        operation="sort_by", args=args.model_copy(update={"numeric": numeric}), detail=detail
    )
    return kernel.derive(step, rows=rids.astype("int64"))


def _sort_held(table: Table, args: SortByArgs, cells: list[list[str]], column: int) -> Table:
    """The Python path for small tables: same keys, same stable order."""
    values = [row[column] for row in cells]
    numeric = args.numeric
    detail: dict[str, object] = {}
    if numeric is None:
        filled = sum(1 for v in values if v.strip())
        numeric, detail = _decision(filled, sum(1 for v in values if looks_numeric(v)))
    keyed: list[tuple[Any, int]] = []
    keyless: list[int] = []
    for i, value in enumerate(values):
        key = read_number(value) if numeric else (value.strip() or None)
        if key is None:
            keyless.append(i)
        else:
            keyed.append((key, i))
    keyed.sort(key=lambda pair: pair[0], reverse=args.descending)  # stable, also reversed
    order = [i for _, i in keyed] + keyless
    step = Step(
        operation="sort_by", args=args.model_copy(update={"numeric": numeric}), detail=detail
    )
    rows = table.kernel.row_ids()[np.asarray(order, dtype=np.int64)]
    return table.kernel.derive(step, rows=rows, records=[cells[i] for i in order])


def _decide_numeric(table: Table, scan: Any, cell: exp.Expr) -> tuple[bool, dict[str, object]]:
    query = scan.select(
        exp.alias_(exp.func("count", trimmed_expression(cell)), "filled"),
        exp.alias_(exp.func("count_if", fill(_LOOKS_NUMERIC, cell=cell)), "numeric"),
    )
    filled, looks = table.kernel.store.fetch(query)[0]
    return _decision(int(filled), int(looks))


def _decision(filled: int, looks: int) -> tuple[bool, dict[str, object]]:
    share = (looks / filled) if filled else 0.0
    numeric = bool(filled) and share >= AUTO_NUMERIC_SHARE
    return numeric, {
        "numeric": "auto",
        "reason": f"{looks} of {filled} non-empty cells look like numbers ({share:.0%})",
    }
