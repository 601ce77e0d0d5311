"""Row expressions: SQL conditions and values over a table's columns, checked and typed.

``filter_rows`` keeps the rows where a condition holds and ``add_column`` can compute
a column from an expression; both take text a model may have written, so this module
turns that text into a safe DuckDB expression over the table's storage:

1. :func:`parse_expression` parses one SQL expression with sqlglot (DuckDB dialect),
   wraps it in ``SELECT * FROM t WHERE ...`` and passes that through
   :func:`tablereason.table.sqlguard.check_select`, the same guard as model-written SQL;
2. it also refuses what has no meaning row by row: subqueries, aggregates, window
   functions, ``*`` and parameters;
3. :func:`compile_expression` resolves every column reference against the table
   (exact name, then case-insensitive, as :meth:`Table.column` does) and replaces it
   by the cell read as the column's type (:func:`column_types`): ``number`` columns
   compare as numbers, ``date`` and ``timestamp`` ones as dates, text as text.

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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

import sqlglot
from sqlglot import exp

from tablereason.errors import SQLError, UnknownColumnError
from tablereason.table.sqlguard import check_select
from tablereason.table.storage import DIALECT, ident, table_ref

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.relation import Scan
    from tablereason.table.value import Table

ColumnType = Literal["number", "date", "timestamp", "text", "empty"]
TABLE_NAME = "t"
SAMPLE_ROWS = 2000
"""Rows read first to rule out column types before every row is checked."""
MAX_EXPRESSION_CHARS = 2000

_ROW_LEVEL_FORBIDDEN: tuple[tuple[type[exp.Expr], str], ...] = (
    (exp.Query, "a subquery"),
    (exp.Subquery, "a subquery"),
    (exp.AggFunc, "an aggregate function"),
    (exp.Window, "a window function"),
    (exp.Star, "*"),
    (exp.Placeholder, "a parameter"),
    (exp.Parameter, "a parameter"),
    (exp.Table, "a table reference"),
)

_ROW_LEVEL_FUNCTIONS: tuple[str, ...] = (
    "Lower", "Upper", "Trim", "Length", "Substring", "Left", "Right", "Reverse", "Replace",
    "RegexpExtract", "RegexpLike", "RegexpReplace", "Contains", "StartsWith", "EndsWith",
    "StrPosition", "SplitPart", "Concat", "ConcatWs", "Cast", "TryCast", "StrToTime",
    "StrToDate", "TimeToStr", "Year", "Month", "Day", "DayOfWeek", "DayOfMonth", "DayOfYear",
    "Week", "Quarter", "Hour", "Minute", "Second", "Extract", "DateDiff", "TimestampTrunc",
    "DateTrunc", "Dayname", "Monthname", "Case", "If", "Coalesce", "Nullif", "Greatest",
    "Least", "Abs", "Round", "Floor", "Ceil", "Trunc", "Sqrt", "Ln", "Log", "Pow", "Sign",
    "IsNan",
)
"""sqlglot function classes a row expression may call: scalar functions whose result
is at most about as large as their arguments. Functions that build values of a size the
text chooses (``repeat``, ``lpad``, ``range``, lists, ``printf`` widths) are refused,
since row expressions run on the process's own database, not in the SQL worker."""

_ROW_LEVEL_NAMES = frozenset({"date_part", "datepart", "strlen", "prefix", "suffix"})
"""Function names sqlglot does not type (``exp.Anonymous``) that are allowed too."""

_ALLOWED_FUNCTIONS: tuple[type[exp.Expr], ...] = tuple(
    getattr(exp, name) for name in _ROW_LEVEL_FUNCTIONS if hasattr(exp, name)
)
_LITERAL_REPLACEMENT: tuple[type[exp.Expr], ...] = (exp.Replace, exp.RegexpReplace)


def parse_expression(text: str) -> exp.Expr:
    """Parse one row-level SQL expression and pass it through the SQL guard.

    Args:
        text: A condition (``weather = 'snow'``) or value (``year(date)``) in DuckDB
            SQL; column names with spaces or punctuation go in double quotes.

    Returns:
        The expression as the guard checked it (column references not yet resolved).

    Raises:
        SQLError: When the text is empty, not one expression, refused by the guard,
            or uses something that has no meaning row by row (a subquery, an
            aggregate, a window function, ``*``).

    Example:
        >>> parse_expression("year(date) = 2012").sql()
        'YEAR(date) = 2012'
    """
    if not text or not text.strip():
        raise SQLError("the expression is empty; write a condition such as weather = 'snow'")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise SQLError(
            f"the expression is {len(text)} characters long; keep it under {MAX_EXPRESSION_CHARS}"
        )
    try:
        parsed = [s for s in sqlglot.parse(text, dialect=DIALECT) if s is not None]
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as error:
        raise SQLError(
            f"the expression does not parse: {str(error).splitlines()[0]}; quote text "
            "values with single quotes and column names with double quotes"
        ) from None
    if len(parsed) != 1:
        raise SQLError(
            f"expected one expression, got {len(parsed)} statements; write a single "
            "condition or value without ';'"
        )
    wrapped = exp.select(exp.Star()).from_(table_ref(TABLE_NAME)).where(parsed[0])
    checked = check_select(wrapped.sql(dialect=DIALECT), [TABLE_NAME])
    where = checked.args.get("where")
    if not isinstance(checked, exp.Select) or where is None or where.this is None:
        raise SQLError("the text is not a single row expression; write a condition or value")
    expression: exp.Expr = where.this
    for node in expression.walk():
        for kind, what in _ROW_LEVEL_FORBIDDEN:
            if isinstance(node, kind):
                raise SQLError(
                    f"{what} is not allowed in a row expression ({node.sql(dialect=DIALECT)}); "
                    "use only this row's columns, literals and scalar functions"
                )
        if isinstance(node, exp.Func) and not isinstance(node, (exp.Binary, exp.Unary)):
            _check_function(node)  # operators (AND, =, ||, NOT) are Func nodes too
    return expression


def _check_function(node: exp.Func) -> None:
    """Refuse a function outside the row-level allowlist (see ``_ROW_LEVEL_FUNCTIONS``)."""
    if isinstance(node, exp.Anonymous):
        allowed = node.name.lower() in _ROW_LEVEL_NAMES
    else:
        allowed = isinstance(node, _ALLOWED_FUNCTIONS)
    if not allowed:
        name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
        raise SQLError(
            f"the function {name.lower()} is not allowed in a row expression; use "
            "comparisons, arithmetic, CASE, CAST and text, date or number functions "
            "(lower, trim, length, substring, replace, regexp_extract, contains, year, "
            "month, strptime, date_diff, round, abs, coalesce)"
        )
    if isinstance(node, _LITERAL_REPLACEMENT):
        replacement = node.args.get("replacement")
        if replacement is not None and not isinstance(replacement, exp.Literal):
            raise SQLError(
                f"{node.sql_name().lower()} takes a quoted text as its replacement in a row "
                "expression, not a column or expression"
            )


def referenced_columns(expression: exp.Expr) -> list[exp.Column]:
    """The column references of a parsed expression, in reading order."""
    return list(expression.find_all(exp.Column))


def resolve_columns(table: Table, expression: exp.Expr) -> list[str]:
    """The table's display names of every column the expression reads (unique, in order).

    Raises:
        UnknownColumnError: For a name the table lacks (naming the closest one); the
            message also says to quote text values, since an unquoted word reads as a
            column name.
        SQLError: For a column qualified by anything but ``t``.
    """
    names: list[str] = []
    for node in referenced_columns(expression):
        qualifier = node.table
        if node.args.get("db") or node.args.get("catalog") or qualifier not in ("", TABLE_NAME):
            raise SQLError(
                f"column {node.sql(dialect=DIALECT)} is qualified by {qualifier!r}; write the "
                f"column name alone (or as {TABLE_NAME}.name)"
            )
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


def compile_expression(
    table: Table, text: str, scan: Scan, types: dict[str, ColumnType] | None = None
) -> tuple[exp.Expr, dict[str, ColumnType]]:
    """Parse, check and type ``text`` into an expression over ``scan``'s columns.

    Args:
        table: The table the expression reads.
        text: The expression text.
        scan: The relation of ``table`` the expression will run on.
        types: Column types already known (else decided with :func:`column_types`).

    Returns:
        The expression ready to use in a query over ``scan``, and the type of every
        column it reads.

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

    def replace(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column):
            name = table.column(node.name).name
            return typed_cell(scan.cell(name), known[name], trim=known[name] != "text")
        return node

    compiled = expression.transform(replace, copy=True)
    return compiled, {n: known[n] for n in names}


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
