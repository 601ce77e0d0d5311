"""A calculator that reads arithmetic with Python's parser and evaluates the tree itself.

Only numbers, parentheses and ``+ - * / ** % //`` (and unary signs) are accepted;
names, calls, attributes and everything else are refused. Sizes are bounded: the
input length, the exponent, and the magnitude of every intermediate result.
Nothing is ever passed to ``eval`` or ``exec``.

Example:
    >>> evaluate("2 * (3 + 4.5)")
    15.0
    >>> Calculator()("1,200 / 4")
    '300'
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable

from tablereason.errors import TableReasonError
from tablereason.llm.base import Usage
from tablereason.tools.base import BaseTool, ToolFailure

Number = int | float

MAX_INPUT_CHARS = 300
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 1e100
MAX_NODES = 200


class CalculationError(TableReasonError, ValueError):
    """An expression is not plain arithmetic, or it is too large to evaluate."""


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_REWRITES = (
    (re.compile(r"(?<=\d),(?=\d{3}\b)"), ""),  # thousands separators
    (re.compile(r"[×x](?=\s*[\d(.])"), "*"),
    (re.compile(r"÷"), "/"),
    (re.compile(r"\^"), "**"),
    (re.compile(r"[$€£]"), ""),
)


def _checked(value: Number) -> Number:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        raise CalculationError("the result is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise CalculationError(f"a value exceeds {MAX_MAGNITUDE:g}")
    return value


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value: Number = node.value  # type: ignore[assignment]  # checked just above
        return _checked(value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _checked(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalculationError(f"exponent {right} is larger than {MAX_EXPONENT}")
        if (
            isinstance(node.op, ast.Pow)
            and abs(left) > 1
            and abs(right) * math.log10(abs(left)) > math.log10(MAX_MAGNITUDE)
        ):
            raise CalculationError(f"a value exceeds {MAX_MAGNITUDE:g}")
        try:
            result = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise CalculationError("division by zero") from None
        if isinstance(result, complex):
            raise CalculationError("the result is a complex number")
        return _checked(result)
    raise CalculationError(f"{type(node).__name__} is not allowed; use numbers and + - * / ** % //")


def clean_expression(text: str) -> str:
    """Normalise common ways of writing arithmetic (``1,000``, ``^``, ``×``, ``$``, a final ``=``).

    Example:
        >>> clean_expression("$1,000 x 2^3 =")
        '1000 * 2**3'
    """
    text = text.strip().rstrip("=").strip()
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text


def evaluate(expression: str) -> Number:
    """Evaluate plain arithmetic safely.

    Args:
        expression: Numbers, parentheses and ``+ - * / ** % //``.

    Returns:
        The value, an ``int`` or a ``float``.

    Raises:
        CalculationError: If the text is not plain arithmetic or is too large.

    Example:
        >>> evaluate("7 // 2 + 2 ** 3 % 5")
        6
    """
    if len(expression) > MAX_INPUT_CHARS:
        raise CalculationError(f"the expression is longer than {MAX_INPUT_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as error:
        raise CalculationError(f"could not read {expression!r} ({error.msg})") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculationError(f"the expression has more than {MAX_NODES} parts")
    return _eval(tree)


def format_number(value: Number) -> str:
    """Print a result: integers exactly, other floats with up to 10 significant digits.

    Example:
        >>> format_number(2.0), format_number(1 / 3)
        ('2', '0.3333333333')
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, float):
        return format(value, ".10g")
    return str(value)


class Calculator(BaseTool):
    """Arithmetic on numbers: the input is an expression such as ``(3 + 4) * 2``.

    Example:
        >>> Calculator()("2 ** 0.5")
        '1.414213562'
    """

    name = "Calculator"
    description = (
        "Computes an arithmetic expression with numbers, + - * / ** % // and parentheses. "
        "The input must be the expression only, for example (3 + 4) * 2."
    )

    def __init__(self, *, name: str | None = None) -> None:
        if name:
            self.name = name

    def run(self, text: str) -> tuple[str, Usage]:
        """Evaluate ``text`` and print the number."""
        expression = clean_expression(text)
        try:
            value = evaluate(expression)
        except CalculationError as error:
            raise ToolFailure(f"{self.name} could not compute {text!r}: {error}") from None
        return format_number(value), Usage(requests=0)
