"""What a row expression may hold: an allow-list of SQL node kinds, functions and types.

A row expression (a ``filter_rows`` condition, an ``add_column`` expression) is text a
model may have written. After sqlglot parses it, :func:`check_nodes` walks the tree and
refuses every node whose kind is not listed here, so what is refused does not depend on
knowing each dangerous construct by name: subqueries, aggregates, windows, ``*`` and
``COLUMNS(...)``, positional references (``#2``), parameters, struct and list values
and field access (``x.f``, ``x['f']``), lambdas, JSON paths, collations, and every
function not listed. What is allowed are comparisons, logic, arithmetic, ``CASE``,
``CAST`` to scalar types, and scalar text, date and number functions whose result is
at most about as large as their arguments, or grows by an amount
:mod:`tablereason.operations.expression_bounds` can bound.

Column references are checked here only for their form (a name, qualified by ``t`` at
most); :mod:`tablereason.operations.row_expressions` resolves them against the table's
visible columns and replaces each by an input of the relation the expression runs on.

Example:
    >>> import sqlglot
    >>> check_nodes(sqlglot.parse_one("year(date) = 2012 AND kind ILIKE '%snow%'", read="duckdb"))
    >>> try:
    ...     check_nodes(sqlglot.parse_one("#2 = 'x'", read="duckdb"))
    ... except SQLError as error:
    ...     print(str(error)[:58])
    a positional reference (#2) is not allowed in a row expres
"""

from __future__ import annotations

from sqlglot import exp

from tablereason.errors import SQLError

DIALECT = "duckdb"
TABLE_NAME = "t"
MAX_TREE_DEPTH = 200
"""Deepest syntax tree a row expression may have."""

_STRUCTURE = (
    "Column", "Identifier", "Literal", "Boolean", "Null", "Paren", "DataType", "DataTypeParam",
    "Interval", "Var",
)  # fmt: skip
_OPERATORS = (
    "And", "Or", "Not", "EQ", "NEQ", "GT", "GTE", "LT", "LTE", "NullSafeEQ", "NullSafeNEQ", "Is",
    "In", "Between", "Like", "ILike", "Escape", "Glob", "SimilarTo", "Add", "Sub", "Mul", "Div",
    "IntDiv", "Mod", "Neg", "DPipe", "Case", "If", "Cast", "TryCast",
)  # fmt: skip
ROW_LEVEL_FUNCTIONS: tuple[str, ...] = (
    "Lower", "Upper", "Trim", "Length", "Substring", "Left", "Right", "Reverse", "Replace",
    "RegexpExtract", "RegexpLike", "RegexpReplace", "Contains", "StartsWith", "EndsWith",
    "StrPosition", "SplitPart", "Concat", "ConcatWs", "StrToTime", "StrToDate", "TimeToStr",
    "Year", "Month", "Day", "DayOfWeek", "DayOfMonth", "DayOfYear", "Week", "Quarter", "Hour",
    "Minute", "Second", "Extract", "DateDiff", "TimestampTrunc", "DateTrunc", "Dayname",
    "Monthname", "Coalesce", "Nullif", "Greatest", "Least", "Abs", "Round", "Floor", "Ceil",
    "Trunc", "Sqrt", "Ln", "Log", "Pow", "Sign", "IsNan",
)  # fmt: skip
"""sqlglot function classes a row expression may call: scalar functions whose result
is at most about as large as their arguments, or (``replace``, ``regexp_replace``,
``concat``, ``strftime``...) larger by an amount that can be bounded from them.
Functions that build values of a size the text chooses (``repeat``, ``lpad``,
``range``, lists, ``printf`` widths) are not listed."""

ROW_LEVEL_NAMES = frozenset({"date_part", "datepart", "strlen", "prefix", "suffix"})
"""Function names sqlglot does not type (``exp.Anonymous``) that are allowed too."""

CAST_TYPES = frozenset(
    getattr(exp.DataType.Type, name)
    for name in (
        "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
        "UINT", "UBIGINT", "FLOAT", "DOUBLE", "DECIMAL", "VARCHAR", "TEXT", "CHAR", "NCHAR",
        "NVARCHAR", "DATE", "TIME", "TIMESTAMP", "TIMESTAMPTZ", "INTERVAL",
    )
    if hasattr(exp.DataType.Type, name)
)  # fmt: skip
"""Scalar types a row expression may cast to (no lists, structs, maps, JSON or blobs)."""

TEXT_TYPES = frozenset(
    getattr(exp.DataType.Type, name)
    for name in ("VARCHAR", "TEXT", "CHAR", "NCHAR", "NVARCHAR")
    if hasattr(exp.DataType.Type, name)
)

_ALLOWED: tuple[type[exp.Expr], ...] = tuple(
    getattr(exp, name)
    for name in (*_STRUCTURE, *_OPERATORS, *ROW_LEVEL_FUNCTIONS, "Anonymous")
    if isinstance(getattr(exp, name, None), type)
)
_UNIT_PARENTS: tuple[type[exp.Expr], ...] = tuple(
    getattr(exp, name)
    for name in ("Interval", "Extract", "DateDiff", "TimestampTrunc", "DateTrunc")
    if hasattr(exp, name)
)
_LITERAL_REPLACEMENT: tuple[type[exp.Expr], ...] = (exp.Replace, exp.RegexpReplace)

# Known node kinds refused with a message of their own; any other is refused too.
_NAMED: tuple[tuple[type[exp.Expr], str], ...] = tuple(
    (getattr(exp, kind), what)
    for kind, what in (
        ("PositionalColumn", "a positional reference"),
        ("Query", "a subquery"),
        ("Subquery", "a subquery"),
        ("AggFunc", "an aggregate function"),
        ("Window", "a window function"),
        ("Star", "*"),
        ("Columns", "COLUMNS(...)"),
        ("Placeholder", "a parameter"),
        ("Parameter", "a parameter"),
        ("Table", "a table reference"),
        ("Lambda", "a lambda"),
        ("Dot", "field access"),
        ("Bracket", "indexing"),
        ("Struct", "a struct value"),
        ("Array", "a list value"),
    )
    if hasattr(exp, kind)
)


def check_nodes(expression: exp.Expr) -> None:
    """Refuse any node of ``expression`` that the allow-list does not hold.

    Also refuses a tree deeper than :data:`MAX_TREE_DEPTH`, a column qualified by
    anything but ``t``, a cast to a type that is not scalar, and a ``replace`` or
    ``regexp_replace`` whose replacement is not a quoted text.

    Raises:
        SQLError: Naming what is not allowed and what to write instead.
    """
    depths = {id(expression): 0}
    for node in expression.walk():
        if node is not expression:
            depths[id(node)] = depths[id(node.parent)] + 1
            if depths[id(node)] > MAX_TREE_DEPTH:
                raise SQLError(
                    f"the expression is nested more than {MAX_TREE_DEPTH} levels deep; "
                    "write it flatter"
                )
        _check_node(node)


def _check_node(node: exp.Expr) -> None:
    shown = _shown(node)
    for kind, what in _NAMED:
        if isinstance(node, kind):
            if what == "a positional reference":
                raise SQLError(
                    f"a positional reference ({shown}) is not allowed in a row expression; "
                    "name the column (columns with spaces or punctuation go in double quotes)"
                )
            raise SQLError(
                f"{what} is not allowed in a row expression ({shown}); "
                "use only this row's columns, literals and scalar functions"
            )
    if not isinstance(node, _ALLOWED) or (
        isinstance(node, exp.Anonymous) and node.name.lower() not in ROW_LEVEL_NAMES
    ):
        if isinstance(node, exp.Func) and not isinstance(node, exp.Binary | exp.Unary):
            raise SQLError(
                f"the function {_function_name(node)} is not allowed in a row expression; use "
                "comparisons, arithmetic, CASE, CAST and text, date or number functions "
                "(lower, trim, length, substring, replace, regexp_extract, contains, year, "
                "month, strptime, date_diff, round, abs, coalesce)"
            )
        raise SQLError(
            f"{shown} is not allowed in a row expression; use comparisons, arithmetic, "
            "CASE, CAST and scalar text, date or number functions over this row's columns"
        )
    if isinstance(node, exp.Column):
        qualifier = node.table
        if node.args.get("db") or node.args.get("catalog") or qualifier not in ("", TABLE_NAME):
            raise SQLError(
                f"column {shown} is qualified by {qualifier!r}; write the column name alone "
                f"(or as {TABLE_NAME}.name)"
            )
    elif isinstance(node, exp.Var) and not isinstance(node.parent, _UNIT_PARENTS):
        raise SQLError(f"{shown} is not allowed here; quote text values with single quotes")
    elif isinstance(node, exp.DataType) and not isinstance(node.parent, exp.DataType):
        if node.this not in CAST_TYPES or any(
            isinstance(p, exp.DataType) for p in node.expressions
        ):
            raise SQLError(
                f"a cast to {shown} is not allowed in a row expression; cast to a number, "
                "text, date, time, timestamp or boolean type"
            )
    elif isinstance(node, _LITERAL_REPLACEMENT):
        replacement = node.args.get("replacement")
        if replacement is not None and not isinstance(replacement, exp.Literal):
            raise SQLError(
                f"{_function_name(node)} takes a quoted text as its replacement in a row "
                "expression, not a column or expression"
            )


def _function_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Func) and not isinstance(node, exp.Anonymous):
        return str(node.sql_name()).lower()
    return str(node.name).lower()


def _shown(node: exp.Expr) -> str:
    """The node as SQL for a message, short (its text was written by the model)."""
    try:
        text = node.sql(dialect=DIALECT)
    except Exception:  # a construct sqlglot cannot write back
        text = type(node).__name__
    return text if len(text) <= 80 else text[:77] + "..."
