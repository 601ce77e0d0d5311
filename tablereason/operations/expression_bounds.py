"""Bounds on what a row expression can produce, and the limits they are held to.

A row expression runs on the process's own DuckDB database, where no operating-system
cap stops a value from growing: ``replace`` nested three times with a 600-character
replacement builds 216 MB per row from a 1-character cell. So before an expression
runs, :func:`bound` works out from the largest input cell of each column, node by
node, how many bytes each part of it can produce for one row (a ``replace`` by at most
its replacement over its search text per character, a ``regexp_replace`` by its
replacement, back-references included, at every position, a concatenation by the sum
of its parts...), and :func:`check_bound` refuses it when

* any part can produce more than ``max_value_bytes`` for one row;
* functions that can multiply a value's size are nested more than
  ``max_growth_nesting`` deep (counted through the computed columns it reads too);
* the bytes every part can hold for the rows DuckDB evaluates at once (a vector of
  2,048 rows per thread), together with the computed columns the table already has,
  pass ``memory``.

After a computed column is evaluated over every row, :func:`check_output` holds the
text all the table's computed columns produce over its rows to ``max_output_bytes``
(reads that keep a column whole, such as a sort, a group or ``Table.sql``, hold it);
every later read of the column runs under ``seconds`` (see
:meth:`tablereason.table.kernel.Kernel.scan`). Limits come from :class:`ExpressionLimits`
(:func:`expression_limits`, :func:`set_expression_limits`).

Example:
    >>> import sqlglot
    >>> tree = sqlglot.parse_one("replace(replace(v, 'a', 'aaaa'), 'b', 'bb')", read="duckdb")
    >>> bound(tree, lambda column: Input(max_bytes=10)).value_bytes   # 10 -> 40 -> 80 bytes
    80
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sqlglot import exp

from tablereason.errors import ConfigurationError, SQLError
from tablereason.operations.expression_checks import TEXT_TYPES
from tablereason.table.database import database_settings
from tablereason.table.relation import Column, closure
from tablereason.table.sqllimits import check_limits

FIXED_BYTES = 32
"""Bytes counted for a value of fixed size (a number, a date, a boolean)."""
TEXT_OF_VALUE_BYTES = 64
"""Bytes counted for a number, date or time written as text."""
FORMAT_BYTES = 64
"""Bytes counted per character of a ``strftime`` format (``%A`` writes a day's name)."""
VECTOR_ROWS = 2048
"""Rows DuckDB evaluates an expression over at once, per thread."""
MAX_LAYERS = 16
"""Most computed columns a table reads (its own and those they read): past this,
add_column stores the table's computed columns (a relation of more layers costs DuckDB
more to plan than to run)."""

_BACKREFERENCE = re.compile(r"\\[0-9]")


@dataclass(frozen=True)
class ExpressionLimits:
    """What a row expression (a ``filter_rows`` condition, an ``add_column`` expression) may use.

    Attributes:
        seconds: Time limit of the operation, and of every later read of a computed
            column (its queries are interrupted past it).
        max_chars: Longest expression text.
        max_value_bytes: Most bytes any part of the expression may produce for one row.
        max_growth_nesting: Most functions that can multiply a value's size
            (``replace`` with a longer replacement, ``regexp_replace``) nested in one
            another, through the computed columns read too.
        memory: Most bytes the expression, with the table's other computed columns,
            may hold for the rows DuckDB evaluates at once.
        max_output_bytes: Most bytes of text the computed columns of one table may
            produce over its rows, together.

    Example:
        >>> ExpressionLimits().memory // 2**20
        512
    """

    seconds: float = 30.0
    max_chars: int = 2000
    max_value_bytes: int = 2**20
    max_growth_nesting: int = 3
    memory: int = 512 * 2**20
    max_output_bytes: int = 512 * 2**20

    def __post_init__(self) -> None:
        check_limits(self, ("max_chars", "max_value_bytes", "memory", "max_output_bytes"))
        if not isinstance(self.max_growth_nesting, int) or self.max_growth_nesting < 0:
            raise ConfigurationError(
                f"max_growth_nesting must be 0 or more, got {self.max_growth_nesting!r}"
            )


_limits = ExpressionLimits()


def expression_limits() -> ExpressionLimits:
    """The limits row expressions are held to in this process."""
    return _limits


def set_expression_limits(limits: ExpressionLimits | None) -> None:
    """Set the limits row expressions are held to (``None`` restores the defaults).

    Example:
        >>> set_expression_limits(ExpressionLimits(seconds=5.0))
        >>> expression_limits().seconds
        5.0
        >>> set_expression_limits(None)
    """
    global _limits
    _limits = limits if limits is not None else ExpressionLimits()


@dataclass(frozen=True)
class Bound:
    """What an expression can produce for one row, in bytes.

    Attributes:
        value_bytes: Its result.
        largest: Its largest part (the result or a part inside it), and that part.
        work: All its parts together (what its evaluation holds at once).
        growth: The deepest nesting of functions that can multiply a size.
    """

    value_bytes: int
    largest: tuple[int, exp.Expr]
    work: int
    growth: int


@dataclass(frozen=True)
class Input:
    """What :func:`bound` knows of the input a column reference reads.

    Attributes:
        max_bytes: Its largest cell, in bytes.
        work: The work of evaluating it (a computed column's), counted once however
            often the expression reads it: the expression runs over a relation that
            holds the input once (see :mod:`tablereason.table.relation`).
        growth: The growth nesting already in it.
    """

    max_bytes: int
    work: int = 0
    growth: int = 0


def bound(expression: exp.Expr, inputs: Callable[[exp.Column], Input]) -> Bound:
    """Bytes per row each part of ``expression`` can produce, from its column references.

    Args:
        expression: The expression (every column reference an input).
        inputs: What is known of the input a column reference reads.
    """
    sizes: dict[int, int] = {}
    depth: dict[int, int] = {}
    read: dict[tuple[str, str], int] = {}
    nodes = list(expression.walk(bfs=True))
    for node in reversed(nodes):  # children before their parents, without recursion
        if isinstance(node, exp.Column):
            known = inputs(node)
            sizes[id(node)], depth[id(node)] = known.max_bytes, known.growth
            read[(node.table, node.name)] = known.work
            continue
        size, multiplies = _size(node, lambda n: sizes.get(id(n), 0) if n is not None else 0)
        sizes[id(node)] = size
        below = (depth.get(id(c), 0) for c in node.iter_expressions())
        depth[id(node)] = max(below, default=0) + multiplies
    largest = max(((sizes[id(n)], n) for n in nodes), key=lambda pair: pair[0])
    work = sum(read.values()) + sum(sizes[id(n)] for n in nodes)
    return Bound(sizes[id(expression)], largest, work, depth[id(expression)])


def _size(node: exp.Expr, of: Callable[[exp.Expr | None], int]) -> tuple[int, int]:
    """The bytes ``node`` can produce from its children's (``of``), and 1 if it multiplies."""
    this = node.args.get("this")
    if isinstance(node, exp.Literal):
        text = str(node.this)
        return (_utf8(text) if node.is_string else max(FIXED_BYTES, len(text))), 0
    if isinstance(node, exp.Identifier | exp.Var | exp.DataType | exp.DataTypeParam):
        return 0, 0
    if isinstance(node, exp.Paren):
        return of(this), 0
    if isinstance(node, exp.Lower | exp.Upper):
        return 2 * of(this), 0  # a case mapping writes at most 3 bytes for 2
    if isinstance(
        node,
        exp.Trim
        | exp.Substring
        | exp.Left
        | exp.Right
        | exp.Reverse
        | exp.SplitPart
        | exp.RegexpExtract
        | exp.Nullif,
    ):
        return of(this), 0
    if isinstance(node, exp.ConcatWs):
        separator, *parts = node.expressions or [None]
        return sum(of(p) for p in parts) + of(separator) * max(0, len(parts) - 1), 0
    if isinstance(node, exp.Concat):
        return sum(of(p) for p in node.expressions), 0
    if isinstance(node, exp.DPipe):
        return of(this) + of(node.expression), 0
    if isinstance(node, exp.Replace):
        return _replaced(of(this), node.args.get("expression"), node.args.get("replacement"))
    if isinstance(node, exp.RegexpReplace):
        return _regexp_replaced(node, of(this))
    if isinstance(node, exp.Cast):
        to = node.args.get("to")
        is_text = isinstance(to, exp.DataType) and to.this in TEXT_TYPES
        return (max(of(this), TEXT_OF_VALUE_BYTES) if is_text else FIXED_BYTES), 0
    if isinstance(node, exp.Case):
        branches = [of(i.args.get("true")) for i in node.args.get("ifs") or []]
        return max([*branches, of(node.args.get("default"))]), 0
    if isinstance(node, exp.If):
        return max(of(node.args.get("true")), of(node.args.get("false"))), 0
    if isinstance(node, exp.Coalesce | exp.Greatest | exp.Least):
        return max([of(this), *(of(e) for e in node.expressions)]), 0
    if isinstance(node, exp.TimeToStr):
        form = node.args.get("format")
        chars = len(str(form.this)) if isinstance(form, exp.Literal) else of(form)
        return FORMAT_BYTES * chars + FIXED_BYTES, 0
    return FIXED_BYTES, 0  # comparisons, logic, arithmetic, numbers and dates


def _replaced(text: int, search: exp.Expr | None, by: exp.Expr | None) -> tuple[int, int]:
    """``replace(text, search, by)``: each occurrence of at least one byte gets ``by``."""
    replacement = _utf8(str(by.this)) if isinstance(by, exp.Literal) else 0
    shortest = _utf8(str(search.this)) if isinstance(search, exp.Literal) else 1
    if not shortest or replacement <= shortest:  # DuckDB leaves text as it is for ''
        return text, 0
    return text + (text // shortest) * (replacement - shortest), 1


def _regexp_replaced(node: exp.RegexpReplace, text: int) -> tuple[int, int]:
    """``regexp_replace``: a match at every position, each copying back-references.

    A pattern can match the empty string at every position, and each back-reference in
    the replacement copies up to the whole text.
    """
    by = node.args.get("replacement")
    replacement = str(by.this) if isinstance(by, exp.Literal) else ""
    references = len(_BACKREFERENCE.findall(replacement))
    each = _utf8(_BACKREFERENCE.sub("", replacement)) + references * text
    if not each:
        return text, 0
    modifiers = node.args.get("modifiers")
    everywhere = not isinstance(modifiers, exp.Literal) or "g" in str(modifiers.this)
    return text + (text + 1 if everywhere else 1) * each, 1


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def rows_at_once(num_rows: int) -> int:
    """Rows DuckDB evaluates an expression over at once: a vector per thread."""
    threads = int(database_settings()["threads"])
    return max(1, min(num_rows, VECTOR_ROWS * max(1, threads)))


def check_bound(
    found: Bound,
    others: Sequence[Column],
    num_rows: int,
    limits: ExpressionLimits,
    what: str,
) -> None:
    """Refuse an expression that can produce too much (see the module notes).

    Args:
        found: The expression's bound.
        others: Columns read along with it: their computed columns' work counts too.
        num_rows: Rows of the table it runs over.
        limits: The limits.
        what: ``"the expression"`` or ``"the condition"``, for the message.

    Raises:
        SQLError: Saying which limit it passes and by how much.
    """
    size, part = found.largest
    if size > limits.max_value_bytes:
        raise SQLError(
            f"{what} can produce up to {_bytes(size)} per row (at "
            f"{_short(part)}), more than the {_bytes(limits.max_value_bytes)} allowed; "
            "build smaller values (replace with shorter text, fewer nested functions)"
        )
    if found.growth > limits.max_growth_nesting:
        raise SQLError(
            f"{what} nests {found.growth} functions that can multiply a value's size (replace "
            "with a longer replacement, regexp_replace), counting the computed columns it "
            f"reads; at most {limits.max_growth_nesting} are allowed"
        )
    rows = rows_at_once(num_rows)
    held = sum(c.computed.work for c in closure(list(others)) if c.computed is not None)
    memory = rows * (found.work + held)
    if memory > limits.memory:
        raise SQLError(
            f"{what} may need {_bytes(memory)} of memory for the {rows} rows DuckDB evaluates "
            f"at once ({_bytes(found.work)} per row, {_bytes(held)} for the computed columns "
            f"it reads along), more than the {_bytes(limits.memory)} allowed; build smaller values"
        )


def check_output(column: Column, others: Sequence[Column], limits: ExpressionLimits) -> None:
    """Refuse a computed column whose text, with the table's others, is too large.

    The text of every computed column of the table over its rows, together, must not
    pass ``limits.max_output_bytes``.

    Raises:
        SQLError: Saying how large the text is.
    """
    total = sum(
        c.computed.total_bytes if c.computed is not None else c.stored_bytes
        for c in closure([*others, column])
    )
    if total > limits.max_output_bytes:
        own = column.computed.total_bytes if column.computed is not None else 0
        raise SQLError(
            f"the expression produces {_bytes(own)} of text over the table's rows "
            f"({_bytes(total)} with the table's other computed columns), more than the "
            f"{_bytes(limits.max_output_bytes)} allowed; build smaller values"
        )


def with_measured(computed_column: Column, max_bytes: int, total_bytes: int) -> Column:
    """``computed_column`` with the sizes its evaluation over every row measured."""
    computed = computed_column.computed
    assert computed is not None
    return replace(
        computed_column,
        computed=replace(computed, max_bytes=max_bytes, total_bytes=total_bytes),
    )


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def _short(node: exp.Expr) -> str:
    try:
        text = node.sql(dialect="duckdb")
    except Exception:  # a construct sqlglot cannot write back
        text = type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."
