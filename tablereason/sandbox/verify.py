"""Verify model-written programs and retry until one works (the Chameleon loop).

A program *verifies* when, after markdown fences are stripped, it assigns the
answer variable and running it in the sandbox yields a non-empty value (not
None, "", [], {} or NaN). :func:`generate_and_verify` asks a generator for
programs at a scheduled temperature until one verifies or patience runs out;
every method that writes programs plugs its LLM call in as the generator.

``RetrySettings.paper()`` reproduces the reference: 20 attempts, temperature 0
then a constant 0.1, no feedback, no fence stripping, the substring check
``"ans ="``, separate globals and locals, a 1 s time limit.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tablereason.errors import ConfigurationError
from tablereason.sandbox.limits import ExecResult, Limits, Mode
from tablereason.sandbox.python import PythonSandbox, run_python
from tablereason.sandbox.values import is_empty

#: ``generate(temperature, feedback) -> program text``; feedback is None on the first try.
Generator = Callable[[float, "str | None"], str]

_FENCE = re.compile(r"```[ \t]*[\w+.-]*[ \t]*\n(.*?)(?:```|\Z)", re.S)


def strip_fences(text: str) -> str:
    r"""Return the code inside the first markdown fence, or the text itself when unfenced.

    Example:
        >>> strip_fences("Here:\n```python\nans = 1\n```\nDone.")
        'ans = 1'
    """
    match = _FENCE.search(text)
    return (match.group(1) if match else text).strip()


def assigns(code: str, answer: str = "ans") -> bool:
    r"""Whether the program assigns ``answer`` at top level or anywhere in its body.

    Example:
        >>> assigns("x = 2\nans = x * 3"), assigns("print(3)")
        (True, False)
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return f"{answer} =" in code
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == answer and isinstance(node.ctx, ast.Store):
            return True
    return False


@dataclass(frozen=True)
class RetrySettings:
    """How programs are checked and retried.

    Attributes:
        patience: Most programs to generate.
        base_temperature: Temperature of the first attempt.
        step: Temperature added on retries.
        max_temperature: Cap of the schedule.
        increasing: True: ``base + step * attempt``; False: the reference's rule,
            ``base + step`` on every retry when ``base < step``, else ``base``.
        feedback: Pass the previous failure to the generator.
        strip_fences: Strip markdown fences before checking and running.
        substring_check: Require the literal text ``"<answer> ="`` (the reference's
            check) instead of an assignment found in the syntax tree.
        answer: The answer variable.
        mode: Sandbox execution mode (``"paper"``: separate globals and locals).
        limits: Sandbox limits for each run.

    Example:
        >>> [RetrySettings.paper().temperature(i) for i in range(3)]
        [0.0, 0.1, 0.1]
    """

    patience: int = 3
    base_temperature: float = 0.0
    step: float = 0.3
    max_temperature: float = 1.0
    increasing: bool = True
    feedback: bool = True
    strip_fences: bool = True
    substring_check: bool = False
    answer: str = "ans"
    mode: Mode = "default"
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        if self.patience < 1:
            raise ConfigurationError(f"patience must be at least 1, got {self.patience}")

    @classmethod
    def paper(cls, **changes: Any) -> RetrySettings:
        """The Chameleon reference settings (``program_generator_and_verifier``).

        Example:
            >>> RetrySettings.paper().patience
            20
        """
        settings = cls(
            patience=20,
            base_temperature=0.0,
            step=0.1,
            increasing=False,
            feedback=False,
            strip_fences=False,
            substring_check=True,
            mode="paper",
            limits=Limits(wall_seconds=1.0, cpu_seconds=1.0),
        )
        return replace(settings, **changes)

    def temperature(self, attempt: int) -> float:
        """Temperature for the 0-based ``attempt``.

        Example:
            >>> RetrySettings().temperature(2)
            0.6
        """
        if attempt == 0:
            return self.base_temperature
        if self.increasing:
            return round(min(self.base_temperature + self.step * attempt, self.max_temperature), 6)
        if self.base_temperature < self.step:
            return round(min(self.base_temperature + self.step, self.max_temperature), 6)
        return self.base_temperature


@dataclass(frozen=True)
class Attempt:
    """One generated program and how it fared."""

    raw: str
    program: str
    temperature: float
    verified: bool
    reason: str | None
    result: ExecResult | None


@dataclass(frozen=True)
class ProgramOutcome:
    """The outcome of the loop: the chosen program (first verified, else the last) and every try."""

    program: str
    verified: bool
    result: ExecResult | None
    attempts: list[Attempt]

    @property
    def value(self) -> Any:
        """The chosen program's answer, or None."""
        return self.result.value if self.result is not None else None


def verify_program(
    raw: str,
    settings: RetrySettings | None = None,
    inputs: Mapping[str, Any] | None = None,
    sandbox: PythonSandbox | None = None,
    temperature: float = 0.0,
) -> Attempt:
    r"""Check one program: assigns the answer, runs, and yields a non-empty value.

    Args:
        raw: Program text as the model wrote it.
        settings: Checking rules; :class:`RetrySettings` defaults when None.
        inputs: Data bound before the program runs.
        sandbox: The pool to run in; the shared default when None.
        temperature: Recorded in the attempt.

    Returns:
        The :class:`Attempt`; ``reason`` says why it did not verify, for feedback.

    Example:
        >>> verify_program("```python\nans = 2 + 3\n```").verified  # doctest: +SKIP
        True
    """
    settings = settings or RetrySettings()
    program = strip_fences(raw) if settings.strip_fences else raw
    name = settings.answer
    has_assignment = f"{name} =" in program if settings.substring_check else assigns(program, name)
    if not has_assignment:
        missing = f"the program must assign the answer to the variable `{name}`"
        return Attempt(raw, program, temperature, False, missing, None)
    result = run_python(
        program, inputs, settings.limits, answer=name, mode=settings.mode, sandbox=sandbox
    )
    reason: str | None
    if result.error is not None:
        reason = f"the program failed: {result.error}"
    elif not result.has_value:
        reason = f"the program finished without setting `{name}`"
    elif is_empty(result.value):
        reason = f"`{name}` is empty ({result.value!r}); it must hold the answer"
    else:
        reason = None
    return Attempt(raw, program, temperature, reason is None, reason, result)


def generate_and_verify(
    generate: Generator,
    settings: RetrySettings | None = None,
    inputs: Mapping[str, Any] | None = None,
    sandbox: PythonSandbox | None = None,
) -> ProgramOutcome:
    """Ask ``generate`` for programs until one verifies or patience runs out.

    Args:
        generate: ``generate(temperature, feedback) -> program``; feedback is the
            previous failure (None on the first attempt or when feedback is off).
        settings: Patience, temperature schedule and checks.
        inputs: Data bound before each program runs.
        sandbox: The pool to run in; the shared default when None.

    Returns:
        The first verified program, or the last one generated, with every attempt.

    Example:
        >>> replies = iter(["print(1)", "ans = 6 * 7"])
        >>> outcome = generate_and_verify(lambda t, f: next(replies))  # doctest: +SKIP
        >>> outcome.verified, outcome.value, len(outcome.attempts)  # doctest: +SKIP
        (True, 42, 2)
    """
    settings = settings or RetrySettings()
    attempts: list[Attempt] = []
    feedback: str | None = None
    for index in range(settings.patience):
        temperature = settings.temperature(index)
        raw = generate(temperature, feedback if settings.feedback else None)
        attempt = verify_program(raw, settings, inputs, sandbox, temperature)
        attempts.append(attempt)
        if attempt.verified:
            break
        feedback = attempt.reason
    last = next((a for a in attempts if a.verified), attempts[-1])
    return ProgramOutcome(last.program, last.verified, last.result, attempts)
