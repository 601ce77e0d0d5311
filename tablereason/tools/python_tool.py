"""The Python tool: a model-written program over the user's tables, run in the sandbox.

The input is Python (one line, statements joined by ``;``, or a code fence). It runs
in :mod:`tablereason.sandbox` (a separate, contained process), never in this one; the
tables arrive there as pandas DataFrames: one table as ``df``, several by their names.
Columns read as numbers (:attr:`Table.types` ``integer`` or ``decimal``) arrive as
numbers, the others as text. The observation is what the program printed and the value
it left: ``ans`` when it sets it, else the value of its last line when that is an
expression (as an interactive interpreter shows it). The program is rewritten for that
by parsing it here, never by running it. A failing program comes back as a "No
evidence found" observation with the error.

Example:
    >>> answer_program("df.shape[0]")
    'ans = (df.shape[0])'
    >>> answer_program("x = 2; print(x)")
    'x = 2; print(x)'
    >>> from tablereason.table import Table
    >>> t = Table.from_records(["species", "mass"], [["Adelie", "3750"], ["Gentoo", "5000"]])
    >>> PythonTool(t)("df['mass'].max()")  # doctest: +SKIP
    '5000'
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tablereason.errors import SandboxError
from tablereason.llm.base import Usage
from tablereason.sandbox.limits import Limits
from tablereason.sandbox.python import run_python
from tablereason.table.value import Table
from tablereason.tools.base import ToolFailure
from tablereason.tools.sql_tool import TablesTool, strip_code

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.sandbox.python import PythonSandbox

SINGLE_NAME = "df"
"""The name of the DataFrame when the tool has one table."""
OUTPUT_CHARS = 1500
"""Characters of printed output and value kept in an observation."""
ANSWER = "ans"

_NUMBERS = frozenset({"integer", "decimal"})


def answer_program(code: str) -> str:
    r"""The program with its last line's value kept as ``ans``, when it computes one.

    A program that assigns ``ans`` itself, or whose last statement is not an
    expression (or a ``print``), is returned as it is; so is text that does not parse
    (the sandbox reports the syntax error).

    Example:
        >>> answer_program("import math\nmath.sqrt(16)")
        'import math\nans = (math.sqrt(16))'
        >>> answer_program("ans = 3"), answer_program("print(3)")
        ('ans = 3', 'print(3)')
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    if not tree.body or _assigns_answer(tree):
        return code
    last = tree.body[-1]
    if not isinstance(last, ast.Expr) or _is_print(last.value):
        return code
    segment = ast.get_source_segment(code, last)
    if segment is None:  # pragma: no cover - parsed source always has positions
        return code
    lines = code.splitlines(keepends=True)
    head = "".join(lines[: last.lineno - 1]) + lines[last.lineno - 1][: last.col_offset]
    tail_line = lines[last.end_lineno - 1] if last.end_lineno else ""
    tail = tail_line[last.end_col_offset :] if last.end_col_offset is not None else ""
    return f"{head}{ANSWER} = ({segment}){tail}"


def _assigns_answer(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Name) and node.id == ANSWER and isinstance(node.ctx, ast.Store)
        for node in ast.walk(tree)
    )


def _is_print(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    )


def frame(table: Table) -> Any:
    """The DataFrame a program gets for ``table``: number columns as numbers, others text.

    Example:
        >>> t = Table.from_records(["name", "n"], [["a", "1"], ["b", ""]])
        >>> frame(t).dtypes.astype(str).tolist()
        ['object', 'float64']
    """
    import pandas as pd

    data = table.to_pandas()
    for column, kind in table.types.items():
        if kind in _NUMBERS and column in data.columns:
            cleaned = data[column].astype(str).str.replace(",", "", regex=False).str.strip()
            data[column] = pd.to_numeric(cleaned, errors="coerce")
    return data


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # pragma: no cover - sandbox values are JSON data
        text = str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return value if isinstance(value, str) else text


def _cut(text: str, limit: int = OUTPUT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 4].rstrip() + " ..."


class PythonTool(TablesTool):
    """Run a Python program over the given tables in the sandbox.

    Args:
        tables: One table (``df`` in the program) or several by name.
        limits: The sandbox's limits for each program.
        sandbox: The sandbox pool; the shared default when None.
        name: Tool name shown to the model.
    """

    name = "Python"
    single = SINGLE_NAME
    about = (
        "Runs a Python program with pandas over the DataFrame(s) {names} in a sandbox and "
        "returns what it prints and the value of its last line. Input: the program, on "
        "one line (join statements with ';')."
    )

    def __init__(
        self,
        tables: Table | Mapping[str, Table],
        *,
        limits: Limits | None = None,
        sandbox: PythonSandbox | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(tables, name)
        self.limits = limits or Limits()
        self.sandbox = sandbox
        self._frames: dict[str, Any] | None = None

    def frames(self) -> dict[str, Any]:
        """The DataFrames the programs get, built once."""
        if self._frames is None:
            self._frames = {name: frame(table) for name, table in self.tables.items()}
        return self._frames

    def run(self, text: str) -> tuple[str, Usage]:
        """Run the program; what it printed and the value it left, as text."""
        code = strip_code(text)
        if not code:
            raise ToolFailure("the input holds no program")
        program = answer_program(code)
        try:
            result = run_python(
                program, self.frames(), self.limits, answer=ANSWER, sandbox=self.sandbox
            )
        except SandboxError as error:
            raise ToolFailure(f"the sandbox could not run the program: {error}") from None
        if result.error is not None:
            raise ToolFailure(f"the program failed: {result.error}")
        parts = [result.stdout.strip()] if result.stdout.strip() else []
        if result.has_value:
            parts.append(_shown(result.value))
        if not parts:
            raise ToolFailure("the program printed nothing and its last line has no value")
        return _cut("\n".join(parts)), Usage(requests=0)
