"""Contained execution of model-written Python and SQL.

Example:
    >>> from tablereason.sandbox import run_python, run_sql
    >>> run_python("ans = sum(xs)", {"xs": [1, 2, 3]}).value  # doctest: +SKIP
    6
"""

from tablereason.sandbox.ast_check import ALLOWED_IMPORTS, check_program, find_problems
from tablereason.sandbox.limits import ExecResult, Limits
from tablereason.sandbox.python import PythonSandbox, active_layers, default_sandbox, run_python
from tablereason.sandbox.sql import (
    SQLGuardError,
    SQLLimits,
    SQLResult,
    SQLTimeoutError,
    check_query,
    run_sql,
)
from tablereason.sandbox.verify import (
    Attempt,
    ProgramOutcome,
    RetrySettings,
    generate_and_verify,
    strip_fences,
    verify_program,
)

__all__ = [
    "ALLOWED_IMPORTS",
    "Attempt",
    "ExecResult",
    "Limits",
    "ProgramOutcome",
    "PythonSandbox",
    "RetrySettings",
    "SQLGuardError",
    "SQLLimits",
    "SQLResult",
    "SQLTimeoutError",
    "active_layers",
    "check_program",
    "check_query",
    "default_sandbox",
    "find_problems",
    "generate_and_verify",
    "run_python",
    "run_sql",
    "strip_fences",
    "verify_program",
]
