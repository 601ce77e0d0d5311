r"""Row expressions: SQL conditions and values over a table's columns, checked and typed.

``filter_rows`` keeps the rows where a condition holds and ``add_column`` can compute
a column from an expression; both take text a model may have written, so this module
turns that text into a safe DuckDB expression over the table's visible columns:

1. :func:`parse_expression` refuses text that is too long, is not valid Unicode or is
   nested too deeply *before* sqlglot parses it (the parser recurses), parses one SQL
   expression (DuckDB dialect), passes it through
   :func:`tablereason.table.sqlguard.check_select` (the guard of model-written SQL),
   and through the allow-list of :mod:`tablereason.operations.expression_checks`;
2. :func:`compile_expression` resolves every column reference against the table's
   visible columns (exact name, then case-insensitive, as :meth:`Table.column` does)
   and replaces it by an input slot read as the column's type (:func:`column_types`):
   ``number`` columns compare as numbers, ``date`` and ``timestamp`` ones as dates,
   text as text. The result is evaluated over a relation that holds those inputs and
   nothing else (:mod:`tablereason.table.relation`), so no spelling, position or
   error message reaches a column the table does not show: a column dropped upstream,
   the row id, another table;
3. it also bounds what the expression can produce from the largest cell of each input
   (:mod:`tablereason.operations.expression_bounds`).

Cells are text; a column counts as ``number`` (``date``, ``timestamp``) when every
non-empty cell reads as one (thousands separators allowed in numbers). Empty cells
of a typed column read as ``NULL``, and so does every cell of a column with no
non-empty cell (``empty``), so any comparison with it is false.

Example:
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["day", "snow cm"], [["mon", "12"], ["tue", ""]])
    >>> parse_expression('"snow cm" > 10').sql()
    '"snow cm" > 10'
    >>> sorted(column_types(t, ["day", "snow cm"]).items())
    [('day', 'text'), ('snow cm', 'number')]
    >>> compile_expression(t, '"snow cm" > 10').value.sql("duckdb")
    'TRY_CAST(NULLIF(REPLACE(TRIM("i"."v0"), \',\', \'\'), \'\') AS DOUBLE) > 10'
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import sqlglot
from sqlglot import exp

from tablereason.errors import SQLError, UnknownColumnError
from tablereason.operations.expression_bounds import Bound, Input, bound, expression_limits
from tablereason.operations.expression_checks import TABLE_NAME, check_nodes
from tablereason.table.relation import Column, slot
from tablereason.table.sqlguard import check_nesting, check_select
from tablereason.table.storage import DIALECT, Store, ident, table_ref

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

ColumnType = Literal["number", "date", "timestamp", "text", "empty"]
SAMPLE_ROWS = 2000
"""Rows read first to rule out column types before every row is checked."""

_cell_bytes: weakref.WeakKeyDictionary[Store, dict[tuple[str, str], int]] = (
    weakref.WeakKeyDictionary()
)
"""Largest cell, in bytes, of each physical column measured so far (per store)."""


def parse_expression(text: str) -> exp.Expr:
    """Parse one row-level SQL expression and check it.

    Args:
        text: A condition (``weather = 'snow'``) or value (``year(date)``) in DuckDB
            SQL; column names with spaces or punctuation go in double quotes.

    Returns:
        The expression as checked (column references not yet resolved).

    Raises:
        SQLError: When the text is empty, too long, not valid text, nested too deeply,
            not one expression, refused by the guard, or holds anything the allow-list
            of :mod:`~tablereason.operations.expression_checks` does not (a subquery,
            an aggregate, ``*``, a positional reference, a function not listed...).

    Example:
        >>> parse_expression("year(date) = 2012").sql()
        'YEAR(date) = 2012'
    """
    limit = expression_limits().max_chars
    if not isinstance(text, str) or not text.strip():
        raise SQLError("the expression is empty; write a condition such as weather = 'snow'")
    if len(text) > limit:
        raise SQLError(f"the expression is {len(text)} characters long; keep it under {limit}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise SQLError(
            f"the expression holds {text[error.start]!r}, which is not a character "
            "(a lone surrogate); write it again as plain text"
        ) from None
    if "\x00" in text:
        raise SQLError("the expression holds a NUL character; write it again as plain text")
    try:
        check_nesting(text)
        parsed = [s for s in sqlglot.parse(text, dialect=DIALECT) if s is not None]
        if len(parsed) != 1:
            raise SQLError(
                f"expected one expression, got {len(parsed)} statements; write a single "
                "condition or value without ';'"
            )
        wrapped = exp.select(exp.Star()).from_(table_ref(TABLE_NAME)).where(parsed[0])
        checked = check_select(wrapped.sql(dialect=DIALECT), [TABLE_NAME])
    except SQLError:
        raise
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as error:
        raise SQLError(
            f"the expression does not parse: {str(error).splitlines()[0][:300]}; quote text "
            "values with single quotes and column names with double quotes"
        ) from None
    except RecursionError:
        raise SQLError("the expression is nested too deeply; write it flatter") from None
    where = checked.args.get("where")
    if not isinstance(checked, exp.Select) or where is None or where.this is None:
        raise SQLError("the text is not a single row expression; write a condition or value")
    expression: exp.Expr = where.this
    check_nodes(expression)
    return expression


def referenced_columns(expression: exp.Expr) -> list[exp.Column]:
    """The column references of a parsed expression, in reading order."""
    return list(expression.find_all(exp.Column))


def resolve_columns(table: Table, expression: exp.Expr) -> list[str]:
    """The table's display names of every column the expression reads (unique, in order).

    Raises:
        UnknownColumnError: For a name the table lacks (naming the closest one); the
            message also says to quote text values, since an unquoted word reads as a
            column name.
    """
    names: list[str] = []
    for node in referenced_columns(expression):
        try:
            name = table.column(node.name).name
        except UnknownColumnError as err:
            raise UnknownColumnError(
                f"{err}; a word that is not a column must be a quoted text value, "
                f"for example '{node.name}'"
            ) from None
        if name not in names:
            names.append(name)
    return names


def column_types(table: Table, names: Iterable[str]) -> dict[str, ColumnType]:
    """The type each named column reads as, decided over every row in DuckDB.

    The first :data:`SAMPLE_ROWS` rows rule out most types cheaply (one cell that
    does not read as a number is enough); the type left for each column is then
    checked over every row, so the result never depends on the sample.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["d", "n"], [["2012-01-01", "1,200"], ["", "3"]])
        >>> column_types(t, ["d", "n"])
        {'d': 'date', 'n': 'number'}
    """
    wanted = list(dict.fromkeys(table.column(n).name for n in names))
    if not wanted:
        return {}
    everything: tuple[ColumnType, ...] = ("number", "date", "timestamp")
    candidates = {name: everything for name in wanted}
    types: dict[str, ColumnType] = {}
    if table.num_rows > SAMPLE_ROWS:
        sampled = _read_as(table, candidates, limit=SAMPLE_ROWS)
        candidates = {}
        for name, kinds in sampled.items():
            if kinds == ():  # a filled cell of the sample reads as no type
                types[name] = "text"
            else:
                candidates[name] = everything if kinds is None else kinds
    found = _read_as(table, candidates, limit=None)
    for name, fits in found.items():
        types[name] = "empty" if fits is None else (fits[0] if fits else "text")
    return {name: types[name] for name in wanted}


def _read_as(
    table: Table, candidates: dict[str, tuple[ColumnType, ...]], *, limit: int | None
) -> dict[str, tuple[ColumnType, ...] | None]:
    """For each column, the candidate types every non-empty cell reads as (in order).

    ``None`` for a column without a non-empty cell. With ``limit``, only the first
    ``limit`` rows (in storage order) are read.
    """
    if not candidates:
        return {}
    checks: list[exp.Expr] = []
    layout: list[tuple[str, tuple[ColumnType, ...]]] = []
    with table.kernel.scan() as scan:
        names = list(candidates)
        inner = scan.select(
            *(exp.alias_(scan.cell(n), ident(f"v{i}")) for i, n in enumerate(names))
        )
        if limit is not None:
            inner = inner.limit(limit, copy=False)
        for i, name in enumerate(names):
            cell = exp.func("trim", exp.column(ident(f"v{i}")))
            filled = exp.NEQ(this=cell.copy(), expression=exp.Literal.string(""))
            checks.append(_count_where(filled))
            for kind in candidates[name]:
                reads: exp.Expr = exp.Not(
                    this=exp.Is(this=typed_cell(cell.copy(), kind), expression=exp.Null())
                )
                if kind == "date":  # DuckDB also reads '2010-01-01 10:00' as a date
                    clock = exp.func("contains", cell.copy(), exp.Literal.string(":"))
                    reads = exp.and_(reads, exp.Not(this=clock))
                checks.append(_count_where(reads))
            layout.append((name, candidates[name]))
        query = exp.select(*checks).from_(
            exp.Subquery(this=inner, alias=exp.TableAlias(this=ident("s")))
        )
        result = table.kernel.store.fetch(query)
    counts = [int(c or 0) for c in result[0]] if result else [0] * len(checks)
    out: dict[str, tuple[ColumnType, ...] | None] = {}
    position = 0
    for name, kinds in layout:
        filled_n = counts[position]
        read = counts[position + 1 : position + 1 + len(kinds)]
        position += 1 + len(kinds)
        out[name] = (
            None
            if not filled_n
            else tuple(k for k, n in zip(kinds, read, strict=True) if n == filled_n)
        )
    return out


@dataclass(frozen=True)
class Compiled:
    """A row expression ready to run over a relation of its inputs.

    Attributes:
        value: The expression, every column reference replaced by an input slot
            (:func:`~tablereason.table.relation.slot`) read as the column's type.
        inputs: The table's columns the slots read, in order.
        types: The type each input was read as, by display name.
        bound: What it can produce per row (see
            :func:`~tablereason.operations.expression_bounds.bound`).
    """

    value: exp.Expr
    inputs: tuple[Column, ...]
    types: dict[str, ColumnType]
    bound: Bound


def compile_expression(
    table: Table, text: str, types: dict[str, ColumnType] | None = None
) -> Compiled:
    """Parse, check and type ``text`` into an expression over the table's visible columns.

    Args:
        table: The table the expression reads.
        text: The expression text.
        types: Column types already known (else decided with :func:`column_types`).

    Raises:
        SQLError, UnknownColumnError: As :func:`parse_expression` and
            :func:`resolve_columns`.
    """
    expression = parse_expression(text)
    names = resolve_columns(table, expression)
    known = dict(types or {})
    missing = [n for n in names if n not in known]
    if missing:
        known.update(column_types(table, missing))
    inputs = tuple(table.column(n) for n in names)
    sizes = input_bytes(table, inputs)

    def replace(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column):
            name = table.column(node.name).name
            kind = known[name]
            return typed_cell(slot(names.index(name)), kind, trim=kind != "text")
        return node

    try:
        value = expression.transform(replace, copy=True)
    except RecursionError:
        raise SQLError("the expression is nested too deeply; write it flatter") from None
    known_inputs = [
        Input(size, c.computed.work, c.computed.growth) if c.computed is not None else Input(size)
        for c, size in zip(inputs, sizes, strict=True)
    ]
    found = bound(value, lambda column: known_inputs[int(column.name[1:])])
    return Compiled(value, inputs, {n: known[n] for n in names}, found)


def input_bytes(table: Table, inputs: Iterable[Column]) -> list[int]:
    """The largest cell of each input column, in bytes (an upper bound).

    A computed column knows it; a stored one is measured over its whole physical table
    once per store (so the bound holds for any rows of it).
    """
    columns = list(inputs)
    store = table.kernel.store
    known = _cell_bytes.setdefault(store, {})
    stored = [c for c in columns if c.computed is None and c.key not in known]
    by_source: dict[str, list[str]] = {}
    for column in stored:
        by_source.setdefault(column.source, []).append(column.field)
    for source, fields in by_source.items():
        store.require([source])
        query = exp.select(
            *(
                exp.func("coalesce", exp.func("max", exp.func("strlen", exp.column(ident(f)))), 0)
                for f in dict.fromkeys(fields)
            )
        ).from_(table_ref(source))
        row = store.fetch(query)[0]
        for name, size in zip(dict.fromkeys(fields), row, strict=True):
            known[(source, name)] = int(size or 0)
    return [c.computed.max_bytes if c.computed is not None else known[c.key] for c in columns]


def typed_cell(cell: exp.Expr, kind: ColumnType | str, *, trim: bool = False) -> exp.Expr:
    """A cell expression read as ``kind`` (``NULL`` when it does not read as one).

    ``trim`` drops surrounding spaces first (every typed read does; the type check
    already trims).
    """
    if kind == "text":
        return cell
    if kind == "empty":
        return exp.Null()
    value = exp.func("trim", cell) if trim else cell
    if kind == "number":
        value = exp.func("replace", value, exp.Literal.string(","), exp.Literal.string(""))
    target = {"number": "DOUBLE", "date": "DATE", "timestamp": "TIMESTAMP"}[kind]
    empty = exp.Nullif(this=value, expression=exp.Literal.string(""))
    return exp.TryCast(this=empty, to=exp.DataType.build(target))


def _count_where(condition: exp.Expr) -> exp.Expr:
    return exp.Filter(
        this=exp.Count(this=exp.Literal.number(1)),
        expression=exp.Where(this=condition),
    )


def quoted(name: str) -> str:
    """A column name as the model should write it in an expression.

    Example:
        >>> quoted("winning team"), quoted("year")
        ('"winning team"', 'year')
    """
    plain = exp.column(ident(name)).sql(dialect=DIALECT)
    bare = exp.column(name).sql(dialect=DIALECT)
    try:
        reparsed = sqlglot.parse_one(bare, dialect=DIALECT)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return plain
    if isinstance(reparsed, exp.Column) and reparsed.name == name and name.islower():
        return bare
    return plain
