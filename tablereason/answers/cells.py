"""Finding an answer among a table's cells: equal cells, cells a text names, column sums.

:class:`TableCells` answers the questions the answer checks ask of a table, on both
paths a table has: in Python over the cells a small table holds, and in DuckDB over
every row of a large one (one scan per question, positions back as numpy arrays, never
a Python object per row). Both read cells the same way:

* a cell **matches** an answer text when their texts are equal ignoring case and runs
  of spaces, or both are numbers and equal (a cell is a number when, without spaces
  and commas, it is digits with at most one dot and a sign: ``1,104``, ``-3.5``);
* a column is **numeric** when it has a number and every non-empty cell is one.

Example:
    >>> from tablereason.table import Table
    >>> cells = TableCells(Table.from_records(["city", "n"], [["Oslo", "1,200"], ["Rome", "7"]]))
    >>> {c: p.tolist() for c, p in cells.equal("1200").items()}
    {'n': [0]}
    >>> cells.sums()
    {'n': (1207.0, 603.5)}
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

from tablereason.answers.question import mentions
from tablereason.answers.value import read_number
from tablereason.operations.lookup_rows import fold
from tablereason.table.storage import fill, ident, template

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

_SPACE = "[\t\n\x0b\x0c\r ]"
_SPACES = re.compile(f"{_SPACE}+")
_NUMERIC = "[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)"
_NUMERIC_TEXT = re.compile(_NUMERIC)
_KEY = template(f"trim(regexp_replace(lower(:cell), '{_SPACE}+', ' ', 'g'))")
_BARE = f"regexp_replace(:cell, '{_SPACE}|,', '', 'g')"
_NUMBER = template(
    f"CASE WHEN regexp_full_match({_BARE}, '{_NUMERIC}') THEN TRY_CAST({_BARE} AS DOUBLE) END"
)
_TEXT_MATCH = template(
    "CASE WHEN lower(:cell) = :key THEN true WHEN contains(lower(:cell), :first) "
    f"THEN trim(regexp_replace(lower(:cell), '{_SPACE}+', ' ', 'g')) = :key ELSE false END"
)
_NUMBER_MATCH = template(
    f"CASE WHEN regexp_full_match(:cell, '[{_SPACE[1:-1]},0-9.+-]+') THEN "
    f"abs((CASE WHEN regexp_full_match({_BARE}, '{_NUMERIC}') THEN TRY_CAST({_BARE} AS DOUBLE) "
    "END) - :number) <= :tolerance ELSE false END"
)
SAMPLE_ROWS = 2000
"""Rows a large table's columns are first read from, to rule out the ones that are not numeric."""
NAMED_LIMIT = 200
"""Most distinct cells :meth:`TableCells.named_in` looks at."""


def cell_key(text: str) -> str:
    """A cell's text as matching compares it: lower case (as DuckDB lowers), spaces folded.

    Example:
        >>> cell_key("  New  York ")
        'new york'
    """
    return _SPACES.sub(" ", fold(text)).strip(" ")


def cell_number(text: str) -> float | None:
    """The number a cell holds as matching reads it (see module notes), or ``None``.

    Example:
        >>> cell_number(" 1,104 "), cell_number("$5"), cell_number("1 104")
        (1104.0, None, 1104.0)
    """
    bare = re.sub(f"{_SPACE}|,", "", text)
    return float(bare) if _NUMERIC_TEXT.fullmatch(bare) else None


def same_number(a: float, b: float) -> bool:
    """Whether two numbers are equal up to float rounding."""
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


class TableCells:
    """The cells of one table, searched in Python (small tables) or DuckDB (large ones).

    Args:
        table: The table to search.
    """

    def __init__(self, table: Table) -> None:
        self.table = table
        self._cells = table.kernel.cells()
        self._equal: dict[str, dict[str, np.ndarray]] = {}

    def equal(self, text: str) -> dict[str, np.ndarray]:
        """Per column, the positions of the cells that match ``text`` (see module notes)."""
        if text not in self._equal:
            self._equal[text] = self._find_equal(text)
        return self._equal[text]

    def _find_equal(self, text: str) -> dict[str, np.ndarray]:
        key = cell_key(text)
        number = read_number(text)
        table = self.table
        if not key or not table.num_rows:
            return {}
        if self._cells is not None:
            found: dict[str, list[int]] = {}
            for row, cells in enumerate(self._cells):
                for name, cell in zip(table.columns, cells, strict=True):
                    if _matches(cell, key, number):
                        found.setdefault(name, []).append(row)
            return {c: np.asarray(p, dtype=np.int64) for c, p in found.items()}
        with table.kernel.scan() as scan:
            tests = [_match_sql(scan.cell(c), key, number) for c in table.columns]
            query = scan.select(
                exp.alias_(scan.pos, "p"), *(exp.alias_(t, f"m{i}") for i, t in enumerate(tests))
            ).where(exp.or_(*(t.copy() for t in tests)), copy=False)
            result = table.kernel.store.fetch_numpy(query)
        positions = result["p"].astype(np.int64)
        matched = {
            c: np.sort(positions[result[f"m{i}"].astype(bool)]) for i, c in enumerate(table.columns)
        }
        return {c: p for c, p in matched.items() if len(p)}

    def named_in(self, text: str) -> list[tuple[str, str]]:
        """Distinct ``(cell text, column)`` of cells whose words ``text`` contains in a row.

        At most :data:`NAMED_LIMIT` distinct cells are looked at on a large table.
        """
        table = self.table
        if self._cells is not None:
            pairs = {
                (cell, name)
                for cells in self._cells
                for name, cell in zip(table.columns, cells, strict=True)
                if cell.strip()
            }
        else:
            pairs = set()
            lowered = exp.Literal.string(cell_key(text))
            with table.kernel.scan() as scan:
                for name in table.columns:
                    key = _key_sql(scan.cell(name))
                    inside = exp.and_(
                        exp.func("contains", lowered.copy(), key.copy()),
                        exp.GTE(
                            this=exp.func("length", key.copy()), expression=exp.Literal.number(1)
                        ),
                    )
                    query = (
                        scan.select(exp.alias_(scan.cell(name), "v"))
                        .where(inside, copy=False)
                        .distinct()
                        .limit(NAMED_LIMIT, copy=False)
                    )
                    pairs.update((str(v), name) for (v,) in table.kernel.store.fetch(query))
        return sorted((cell, name) for cell, name in pairs if mentions(text, cell))

    def sums(self) -> dict[str, tuple[float, float]]:
        """``(sum, mean)`` of each numeric column (see module notes)."""
        table = self.table
        if not table.num_rows:
            return {}
        if self._cells is not None:
            out: dict[str, tuple[float, float]] = {}
            for i, name in enumerate(table.columns):
                texts = [c for c in (row[i] for row in self._cells) if c.strip()]
                numbers = [cell_number(c) for c in texts]
                if numbers and all(n is not None for n in numbers):
                    total = float(sum(n for n in numbers if n is not None))
                    out[name] = (total, total / len(numbers))
            return out
        # A sample rules out most columns; the ones left are then summed over every row.
        candidates = [name for name, *_ in self._column_sums(table.columns, SAMPLE_ROWS)]
        return {
            name: (total, total / count)
            for name, total, count in self._column_sums(candidates, None)
        }

    def _column_sums(self, names: list[str], limit: int | None) -> list[tuple[str, float, int]]:
        """``(name, sum, count)`` of the numeric ones among ``names`` (first ``limit`` rows)."""
        if not names:
            return []
        kernel = self.table.kernel
        with kernel.scan() as scan:
            inner = scan.select(
                *(exp.alias_(scan.cell(n), ident(f"v{i}")) for i, n in enumerate(names))
            )
            if limit is not None:
                inner = inner.limit(limit, copy=False)
            parts: list[exp.Expr] = []
            for i in range(len(names)):
                cell = exp.column(ident(f"v{i}"))
                number = _number_sql(cell.copy())
                filled = exp.NEQ(
                    this=exp.func("trim", cell.copy()), expression=exp.Literal.string("")
                )
                parts += [
                    exp.func("sum", number.copy()),
                    exp.func("count", number.copy()),
                    exp.Filter(
                        this=exp.Count(this=exp.Literal.number(1)),
                        expression=exp.Where(this=filled),
                    ),
                ]
            query = exp.select(*parts).from_(
                exp.Subquery(this=inner, alias=exp.TableAlias(this=ident("s")))
            )
            row = kernel.store.fetch(query)[0]
        found = []
        for i, name in enumerate(names):
            total, count, filled_n = row[3 * i : 3 * i + 3]
            if count and count == filled_n:
                found.append((name, float(total), int(count)))
        return found

    def holding(self, column: str, value: str) -> np.ndarray:
        """The positions of the rows whose ``column`` cell is exactly ``value``."""
        table = self.table
        if self._cells is not None:
            i = table.columns.index(column)
            rows = [r for r, cells in enumerate(self._cells) if cells[i] == value]
            return np.asarray(rows, dtype=np.int64)
        with table.kernel.scan() as scan:
            same = exp.EQ(this=scan.cell(column), expression=exp.Literal.string(value))
            query = scan.select(exp.alias_(scan.pos, "p")).where(same, copy=False)
            return np.sort(table.kernel.store.fetch_numpy(query)["p"].astype(np.int64))


def _matches(cell: str, key: str, number: int | float | None) -> bool:
    if cell_key(cell) == key:
        return True
    if number is None:
        return False
    found = cell_number(cell)
    return found is not None and same_number(found, float(number))


def _key_sql(cell: exp.Expr) -> exp.Expr:
    return fill(_KEY, cell=cell)


def _number_sql(cell: exp.Expr) -> exp.Expr:
    return fill(_NUMBER, cell=cell)


def _match_sql(cell: exp.Expr, key: str, number: int | float | None) -> exp.Expr:
    """SQL for :func:`_matches`, cheap first: the folded text is read only when it may match."""
    first = exp.Literal.string(key.split(" ")[0])
    test = fill(_TEXT_MATCH, cell=cell.copy(), key=exp.Literal.string(key), first=first)
    if number is not None:
        close = fill(
            _NUMBER_MATCH,
            cell=cell.copy(),
            number=exp.Literal.number(repr(float(number))),
            tolerance=exp.Literal.number(repr(1e-9 * max(1.0, abs(float(number))))),
        )
        test = exp.or_(test, close)
    return exp.func("coalesce", test, exp.false())
