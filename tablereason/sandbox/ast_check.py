"""Static check of a program before it runs, with messages written for the model.

This is a courtesy layer, not the boundary: it turns the most common mistakes
and escape attempts into a clear, early error ("line 3: `open` is not available
...") so the model can fix its program. The kernel layers contain whatever gets
past it.
"""

from __future__ import annotations

import ast

from tablereason.errors import ExecutionError

#: Modules a program may import (top-level names).
ALLOWED_IMPORTS: frozenset[str] = frozenset({
    "math", "cmath", "statistics", "fractions", "decimal", "numbers", "datetime",
    "calendar", "re", "string", "collections", "itertools", "functools", "heapq",
    "bisect", "json", "random", "textwrap", "typing", "dataclasses", "enum",
    "numpy", "pandas", "time", "copy", "pprint", "unicodedata", "difflib",
})  # fmt: skip

_FORBIDDEN_NAMES: dict[str, str] = {
    "open": "files cannot be opened; use the data given to the program",
    "exec": "programs cannot run other code; write the logic directly",
    "eval": "programs cannot evaluate strings as code; compute the value directly",
    "compile": "programs cannot compile code",
    "input": "there is no user to ask; use the data given to the program",
    "breakpoint": "there is no debugger",
    "help": "there is no interactive help",
    "exit": "end the program by reaching its last line",
    "quit": "end the program by reaching its last line",
    "globals": "namespace introspection is not available",
    "locals": "namespace introspection is not available",
    "vars": "namespace introspection is not available",
    "getattr": "attributes must be written out, not looked up by string",
    "setattr": "attributes must be written out, not set by string",
    "delattr": "attributes must be written out, not deleted by string",
    "memoryview": "raw memory access is not available",
    "attrgetter": "attributes must be written out, not looked up by string",
    "methodcaller": "methods must be called directly",
}

_FORBIDDEN_ATTRS: frozenset[str] = frozenset({
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "gi_frame", "gi_code",
    "cr_frame", "cr_code", "ag_frame", "ag_code", "tb_frame", "tb_next", "co_code",
    "os", "sys", "subprocess", "builtins", "ctypes", "importlib", "socket", "shutil",
    "system", "popen", "fork", "execv", "execve", "spawn", "_os", "_sys",
    "load_module", "exec_module", "loader", "modules", "_getframe",
})  # fmt: skip


def _problem(node: ast.AST, message: str) -> str:
    return f"line {getattr(node, 'lineno', '?')}: {message}"


def find_problems(code: str, allowed_imports: frozenset[str] = ALLOWED_IMPORTS) -> list[str]:
    """List what the sandbox will refuse in ``code``, one readable line each.

    Args:
        code: Python source.
        allowed_imports: Top-level modules the program may import.

    Returns:
        Messages such as ``"line 1: import of 'os' is not allowed; ..."``; empty when
        the program passes.

    Example:
        >>> find_problems("import os")[0].startswith("line 1: import of 'os' is not allowed")
        True
    """
    try:
        tree = ast.parse(code, filename="<program>", mode="exec")
    except SyntaxError as exc:
        return [f"line {exc.lineno}: syntax error: {exc.msg}"]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [f"the program could not be parsed ({type(exc).__name__}); write simpler code"]
    problems: list[str] = []
    short = ", ".join(sorted(allowed_imports)[:3])
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            if isinstance(node, ast.ImportFrom) and node.level:
                names = ["." * node.level + (node.module or "")]
            for name in names:
                if name.split(".")[0] not in allowed_imports:
                    problems.append(_problem(
                        node,
                        f"import of {name!r} is not allowed; available modules: {short}, ...",
                    ))  # fmt: skip
        elif isinstance(node, ast.Name):
            if node.id.startswith("__") and node.id.endswith("__"):
                problems.append(_problem(node, f"the name {node.id!r} is not available"))
            elif node.id in _FORBIDDEN_NAMES:
                problems.append(_problem(
                    node,
                    f"{node.id!r} is not available in the sandbox: {_FORBIDDEN_NAMES[node.id]}",
                ))  # fmt: skip
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("__") and node.attr.endswith("__"):
                problems.append(_problem(
                    node, f"special attribute {node.attr!r} is not available; use ordinary values"
                ))  # fmt: skip
            elif node.attr in _FORBIDDEN_ATTRS:
                problems.append(_problem(
                    node, f"attribute {node.attr!r} is not available in the sandbox"
                ))  # fmt: skip
        elif isinstance(node, ast.alias) and node.name in _FORBIDDEN_NAMES:
            problems.append(_problem(node, f"{node.name!r} is not available in the sandbox"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "__" in node.value:
            problems.append(_problem(
                node, "strings containing '__' are not allowed (they name special attributes)"
            ))  # fmt: skip
    return problems


def check_program(code: str, allowed_imports: frozenset[str] = ALLOWED_IMPORTS) -> None:
    """Raise :class:`ExecutionError` listing every problem :func:`find_problems` finds.

    Args:
        code: Python source.
        allowed_imports: Top-level modules the program may import.

    Raises:
        ExecutionError: The program would be refused; the message is for the model.

    Example:
        >>> check_program("ans = 1 + 1")
    """
    problems = find_problems(code, allowed_imports)
    if problems:
        raise ExecutionError("the program was rejected before running:\n" + "\n".join(problems))
