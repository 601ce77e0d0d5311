r"""Column types: what each column's cells read as, decided once per column, and NULLs.

Cells keep the text they were loaded with (the model is shown that text); each column
also has a type, and everything that computes on values (conditions and computed
columns, ``Table.sql``, the profile of a large table) reads the column's cells as that
type. A type is *declared* when the source said it (a DataFrame's dtype, a Parquet or
database column's type, an override given at load) and otherwise *inferred* from the
text, over every cell of the column:

============  ==========================================================================
type          every filled cell (surrounding spaces ignored) is
============  ==========================================================================
integer       digits with an optional sign, optionally grouped in thousands by commas
              (``-12``, ``1,200``), within 64-bit integers
decimal       a number with a fraction or an exponent (``3.5``, ``1,200.75``, ``2e-3``),
              ``inf``, ``-inf``, ``nan`` as DuckDB writes them, or a mix of such numbers
              and integers
boolean       ``true`` or ``false``, in any case
date          year-month-day with ``-`` or ``/`` (``2012-01-31``, ``2012/1/31``), a real day
timestamp     a date and a time of day (``2012-01-31 10:30``, ``2012-01-31T10:30:00``), or
              a mix of those and dates
text          anything else
empty         (inferred only) no filled cell: every cell is ``NULL``, which compares
              with anything (as false)
============  ==========================================================================

The first type of the table that every filled cell reads as wins, so a mixed column
(numbers and words) is text. A *missing* cell is one that is empty or holds only
spaces: it reads as ``NULL`` in every type, text included. A cell that does not read
as its column's declared type (an override that does not fit) reads as ``NULL`` too.
A small table's cells held in Python are typed in Python (:func:`infer_text`), by the
same patterns (:data:`PATTERNS`), so it need not be written to DuckDB.

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(
    ...     ["n", "x", "d", "k"],
    ...     [["1,200", "0.5", "2012-01-31", "a"], ["", "2", "2012-02-01", ""]],
    ... )
    >>> column_types(t, t.columns)
    {'n': 'integer', 'x': 'decimal', 'd': 'date', 'k': 'text'}
    >>> typed_cell(exp.column("c"), "integer").sql("duckdb")
    "TRY_CAST(NULLIF(REPLACE(TRIM(c, ' '), ',', ''), '') AS BIGINT)"
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Literal, cast

from sqlglot import exp

from tablereason.errors import TableError
from tablereason.table.relation import Column
from tablereason.table.storage import Store, col, ident, table_ref

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

ColumnType = Literal["integer", "decimal", "boolean", "date", "timestamp", "text", "empty"]
TYPES: tuple[ColumnType, ...] = ("integer", "decimal", "boolean", "date", "timestamp", "text")
"""Every column type a column can be given, in the order inference tries them."""
NUMBER_TYPES: frozenset[str] = frozenset({"integer", "decimal"})
ORDERED_TYPES: frozenset[str] = frozenset({"integer", "decimal", "date", "timestamp"})
"""Types whose values have a smallest and a largest (the profile shows the range)."""
SAMPLE_ROWS = 2000
"""Rows read first to rule out column types before every row is checked."""

SQL_TYPES: dict[str, str] = {
    "integer": "BIGINT",
    "decimal": "DOUBLE",
    "boolean": "BOOLEAN",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "text": "VARCHAR",
}
"""The DuckDB type each column type is read as."""

_GROUPED = r"([0-9]+|[0-9]{1,3}(,[0-9]{3})+)"
_DAY = r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}|[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}"
_CLOCK = r"([01]?[0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]+)?)?"
PATTERNS: dict[str, str] = {
    "integer": rf"[+-]?{_GROUPED}",
    "decimal": rf"[+-]?({_GROUPED}(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|-?(inf|nan)",
    "boolean": r"[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]",
    "date": _DAY,
    "timestamp": rf"({_DAY})([ T]{_CLOCK})?",
}
"""What the text of a filled cell of each type looks like (spaces around it dropped),
as RE2 and Python's ``re`` read them alike (ASCII digits only)."""
_COMPILED = {kind: re.compile(pattern) for kind, pattern in PATTERNS.items()}
_INT64 = 2**63


def _spaceless(cell: exp.Expr) -> exp.Expr:
    """The cell without the spaces around it (only spaces: ``trim(cell, ' ')``)."""
    return exp.Trim(this=cell.copy(), expression=exp.Literal.string(" "))


def missing(cell: exp.Expr) -> exp.Expr:
    """True for a missing cell (empty or only spaces), the cells that read as ``NULL``.

    Example:
        >>> missing(exp.column("c")).sql("duckdb")
        "TRIM(c, ' ') = ''"
    """
    return exp.EQ(this=_spaceless(cell), expression=exp.Literal.string(""))


def typed_cell(cell: exp.Expr, kind: ColumnType | str) -> exp.Expr:
    """A cell's text read as ``kind``: ``NULL`` when it is missing or does not read as one.

    Example:
        >>> typed_cell(exp.column("c"), "text").sql("duckdb")
        "CASE WHEN TRIM(c, ' ') = '' THEN NULL ELSE c END"
    """
    if kind == "empty":
        return exp.Null()
    if kind == "text":
        return exp.Case(ifs=[exp.If(this=missing(cell), true=exp.Null())], default=cell.copy())
    trimmed = _spaceless(cell)
    if kind == "boolean":
        return exp.Case(
            this=exp.func("lower", trimmed),
            ifs=[
                exp.If(this=exp.Literal.string("true"), true=exp.true()),
                exp.If(this=exp.Literal.string("false"), true=exp.false()),
            ],
        )
    if kind not in SQL_TYPES:
        raise TableError(f"unknown column type {kind!r}; choose one of {', '.join(TYPES)}")
    value: exp.Expr = trimmed
    if kind in NUMBER_TYPES:
        value = exp.func("replace", value, exp.Literal.string(","), exp.Literal.string(""))
    empty = exp.Nullif(this=value, expression=exp.Literal.string(""))
    return exp.TryCast(this=empty, to=exp.DataType.build(SQL_TYPES[kind]))


def _reads_as(cell: exp.Expr, kind: str) -> exp.Expr:
    """True when a filled cell reads as ``kind`` (the test inference counts)."""
    shape = exp.func("regexp_full_match", _spaceless(cell), exp.Literal.string(PATTERNS[kind]))
    if kind in ("integer", "date", "timestamp"):  # in range, a real day
        reads = exp.Not(this=exp.Is(this=typed_cell(cell, kind), expression=exp.Null()))
        return exp.and_(shape, reads)
    return shape


def infer_text(cells: Iterable[str]) -> ColumnType:
    """The type of a column of text, decided in Python exactly as in DuckDB.

    Example:
        >>> infer_text(["1", " 2 ", ""]), infer_text(["1", "2.5"]), infer_text(["", " "])
        ('integer', 'decimal', 'empty')
    """
    kinds: list[ColumnType] = list(TYPES[:-1])
    filled = False
    for cell in cells:
        text = cell.strip(" ")
        if not text:
            continue
        filled = True
        kinds = [k for k in kinds if _fits(text, k)]
        if not kinds:
            return "text"
    return kinds[0] if filled else "empty"


def _fits(text: str, kind: str) -> bool:
    if _COMPILED[kind].fullmatch(text) is None:
        return False
    if kind == "integer":
        return -_INT64 <= int(text.replace(",", "")) < _INT64
    if kind in ("date", "timestamp"):
        year, month, day = (int(p) for p in re.split("[-/]", re.split("[ T]", text)[0]))
        return _real_day(year, month, day)
    return True


def _real_day(year: int, month: int, day: int) -> bool:
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return 1 <= month <= 12 and 1 <= day <= days[month - 1]


def column_types(table: Table, names: Iterable[str]) -> dict[str, ColumnType]:
    """The type of each named column: declared, or inferred once over the whole column.

    A stored column is inferred over every cell of its physical table (so a table
    keeps its columns' types whatever rows it selects); a computed one over the rows
    of the table it is read from. Either is kept for the table's whole family.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["d", "b"], [["2012-01-01 10:00", "TRUE"], ["", "false"]])
        >>> column_types(t, ["d", "b"])
        {'d': 'timestamp', 'b': 'boolean'}
    """
    wanted = [table.column(n) for n in dict.fromkeys(table.column(n).name for n in names)]
    store = table.kernel.store
    known = _known(store)
    todo = [c for c in wanted if c.key not in known]
    by_source: dict[str, list[Column]] = {}
    for column in todo:
        if column.computed is None:
            by_source.setdefault(column.source, []).append(column)
    for source, columns in by_source.items():
        held = store.held(source)
        if held is not None:  # a small table not written yet: decided in Python
            known.update((c.key, infer_text(held[int(c.field[1:])])) for c in columns)
            continue
        store.require([source])

        def physical(
            limit: int | None, fields: list[Column] = columns, src: str = source
        ) -> exp.Select:
            query = exp.select(
                *(exp.alias_(col(c.field), ident(f"v{i}")) for i, c in enumerate(fields))
            ).from_(table_ref(src))
            return query if limit is None else query.limit(limit, copy=False)

        known.update(
            zip((c.key for c in columns), _infer(store, physical, len(columns)), strict=True)
        )
    computed = [c for c in todo if c.computed is not None]
    if computed:
        with table.kernel.scan() as scan:

            def derived(limit: int | None) -> exp.Select:
                query = scan.select(
                    *(exp.alias_(scan.value(c), ident(f"v{i}")) for i, c in enumerate(computed))
                )
                return query if limit is None else query.limit(limit, copy=False)

            found = _infer(store, derived, len(computed))
        known.update(zip((c.key for c in computed), found, strict=True))
    return {c.name: cast(ColumnType, known[c.key]) for c in wanted}


def declare_types(table: Table, types: Mapping[str, str] | str) -> None:
    """Declare column types of a table just loaded (an override, or its source's types).

    Args:
        table: The table.
        types: Column name to type (the others keep their inferred type), or one type
            for every column (``"text"`` keeps every column as text).

    Raises:
        TableError: For an unknown type; UnknownColumnError for an unknown column.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["zip", "n"], [["02139", "4"]])
        >>> declare_types(t, {"zip": "text"})
        >>> column_types(t, ["zip", "n"])
        {'zip': 'text', 'n': 'integer'}
    """
    chosen = dict.fromkeys(table.columns, types) if isinstance(types, str) else dict(types)
    known = _known(table.kernel.store)
    for name, kind in chosen.items():
        if kind not in TYPES:
            raise TableError(
                f"unknown column type {kind!r} for {name!r}; choose one of {', '.join(TYPES)}"
            )
        known[table.column(name).key] = kind


def _known(store: Store) -> dict[tuple[str, str], str]:
    return store.column_types


def _infer(store: Store, query: Callable[[int | None], exp.Select], width: int) -> list[str]:
    """The inferred type of the ``width`` cells ``v0, v1, ...`` that ``query`` returns.

    The first :data:`SAMPLE_ROWS` rows rule out most types cheaply; the types left are
    then checked over every row, so the result never depends on the sample.
    """
    candidates: list[tuple[str, ...]] = [TYPES[:-1]] * width
    sample = _counts(store, query(SAMPLE_ROWS), candidates)
    candidates = [
        kinds if filled == 0 else tuple(k for k, n in zip(kinds, reads, strict=True) if n == filled)
        for kinds, (filled, reads) in zip(candidates, sample, strict=True)
    ]
    full = _counts(store, query(None), candidates)
    out: list[str] = []
    for kinds, (filled, reads) in zip(candidates, full, strict=True):
        fits = [k for k, n in zip(kinds, reads, strict=True) if n == filled]
        out.append("empty" if not filled else (fits[0] if fits else "text"))
    return out


def _counts(
    store: Store, inner: exp.Select, candidates: list[tuple[str, ...]]
) -> list[tuple[int, list[int]]]:
    """Per column: its filled cells, and how many read as each candidate type."""
    checks: list[exp.Expr] = []
    for i, kinds in enumerate(candidates):
        cell = exp.column(ident(f"v{i}"))
        checks.append(_count_where(exp.Not(this=missing(cell))))
        checks.extend(_count_where(_reads_as(cell, k)) for k in kinds)
    if not checks:
        return []
    query = exp.select(*checks).from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=ident("s")))
    )
    row = store.fetch(query)
    counts = [int(c or 0) for c in row[0]] if row else [0] * len(checks)
    out: list[tuple[int, list[int]]] = []
    position = 0
    for kinds in candidates:
        out.append((counts[position], counts[position + 1 : position + 1 + len(kinds)]))
        position += 1 + len(kinds)
    return out


def _count_where(condition: exp.Expr) -> exp.Expr:
    return exp.Filter(
        this=exp.Count(this=exp.Literal.number(1)), expression=exp.Where(this=condition)
    )


def null_counts(table: Table, names: Iterable[str]) -> dict[str, int]:
    """How many cells of each named column are missing (read as ``NULL``), over its rows.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["a", "b"], [["1", ""], ["", " "], ["3", "x"]])
        >>> null_counts(t, ["a", "b"])
        {'a': 1, 'b': 2}
    """
    wanted = list(dict.fromkeys(table.column(n).name for n in names))
    if not wanted or not table.num_rows:
        return dict.fromkeys(wanted, 0)
    cells = table.kernel.held_cells()
    if cells is not None:
        at = [table.kernel.position(n) for n in wanted]
        return {
            n: sum(1 for r in cells if not r[i].strip(" ")) for n, i in zip(wanted, at, strict=True)
        }
    with table.kernel.scan() as scan:
        query = scan.select(*(_count_where(missing(scan.cell(n))) for n in wanted))
        row = table.kernel.store.fetch(query)[0]
    return {n: int(v or 0) for n, v in zip(wanted, row, strict=True)}


DUCKDB_TYPES: dict[str, ColumnType] = {
    **dict.fromkeys(
        (
            "TINYINT",
            "SMALLINT",
            "INTEGER",
            "BIGINT",
            "HUGEINT",
            "UTINYINT",
            "USMALLINT",
            "UINTEGER",
            "UBIGINT",
            "UHUGEINT",
        ),
        "integer",
    ),
    **dict.fromkeys(("FLOAT", "DOUBLE", "DECIMAL"), "decimal"),
    "BOOLEAN": "boolean",
    "DATE": "date",
    **dict.fromkeys(
        ("TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "TIMESTAMP WITH TIME ZONE"),
        "timestamp",
    ),
}
"""The column type of a DuckDB column type (its name up to any ``(``); others are text."""


def from_duckdb_type(name: str) -> ColumnType:
    """The column type of a DuckDB type name.

    Example:
        >>> from_duckdb_type("DECIMAL(10,2)"), from_duckdb_type("VARCHAR")
        ('decimal', 'text')
    """
    return DUCKDB_TYPES.get(name.split("(")[0].strip().upper(), "text")


def from_pandas_dtype(dtype: object) -> ColumnType | None:
    """The column type a pandas dtype declares; ``None`` for object columns (inferred).

    Example:
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"a": [1], "b": [0.5], "c": ["x"]})
        >>> frame["o"] = pd.Series([1], dtype=object)
        >>> [from_pandas_dtype(d) for d in frame.dtypes]
        ['integer', 'decimal', 'text', None]
        >>> from_pandas_dtype("date32[day][pyarrow]")
        'date'
    """
    kind = getattr(dtype, "kind", "O")
    name = str(dtype).lower()
    if name in ("string", "str") or name.startswith("string["):
        return "text"
    if name.startswith(("date32", "date64")):  # pyarrow-backed dates (kind "M" as timestamps)
        return "date"
    return cast(
        "ColumnType | None",
        {"i": "integer", "u": "integer", "f": "decimal", "b": "boolean", "M": "timestamp"}.get(
            kind
        ),
    )
