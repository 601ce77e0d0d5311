"""The tool contract: a name, a description for planner prompts, and text in, text out.

A tool never raises on bad input or a failed look-up: it answers with an
observation that starts with ``"No evidence found"`` and says why, so a plan or a
reasoning loop can go on. Tools that spend model tokens (the LLM and Table tools)
also report their usage through :meth:`BaseTool.call`, so methods can count every
model call, tool-internal ones included. The registry of built-in tools and the
context they are built from are in :mod:`tablereason.tools.catalog`.

Example:
    >>> from tablereason.tools.calculator import Calculator
    >>> calc = Calculator()
    >>> calc("(3 + 4) * 2")
    '14'
    >>> calc("3 +")
    "No evidence found: Calculator could not compute '3 +': could not read '3 +' (invalid syntax)"
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from tablereason.llm.base import Usage

NO_EVIDENCE = "No evidence found"


def no_evidence(reason: str) -> str:
    """The observation a tool returns when it has nothing to give.

    Example:
        >>> no_evidence("no document matches 'xyz'")
        "No evidence found: no document matches 'xyz'"
    """
    reason = " ".join(reason.split())
    return f"{NO_EVIDENCE}: {reason}" if reason else NO_EVIDENCE


def is_no_evidence(text: str) -> bool:
    """Whether an observation is a failure observation.

    Example:
        >>> is_no_evidence("No evidence found: timeout"), is_no_evidence("Paris")
        (True, False)
    """
    return text.startswith(NO_EVIDENCE)


@runtime_checkable
class Tool(Protocol):
    """Anything a planner can call: ``name``, ``description`` and text to text.

    ``__call__`` must not raise; failures come back as :func:`no_evidence` text.
    """

    name: str
    description: str

    def __call__(self, text: str) -> str:
        """Run the tool on ``text`` and return the observation."""
        ...


class ToolOutput(BaseModel):
    """One tool call: its observation, the model usage it spent, and any failure reason.

    Example:
        >>> ToolOutput(text="42").ok
        True
    """

    model_config = ConfigDict(frozen=True)

    text: str
    usage: Usage = Field(default_factory=lambda: Usage(requests=0))
    error: str | None = None
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the tool found something."""
        return self.error is None


class ToolFailure(Exception):
    """Raised inside :meth:`BaseTool.run` to end a call with a "No evidence found" reason."""

    def __init__(self, reason: str, usage: Usage | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage = usage


class BaseTool:
    """Base class for tools: write :meth:`run`; :meth:`call` turns any failure into text.

    ``run`` returns the observation text and the usage it spent. Raising
    :class:`ToolFailure` (or any exception) produces a ``"No evidence found: ..."``
    observation instead of an error.

    Example:
        >>> class Echo(BaseTool):
        ...     name, description = "Echo", "repeats its input"
        ...     def run(self, text):
        ...         return text, Usage(requests=0)
        >>> Echo()("hi"), Echo()("  ")
        ('hi', 'No evidence found: Echo got an empty input')
    """

    name: str = "Tool"
    description: str = ""

    def run(self, text: str) -> tuple[str, Usage]:  # pragma: no cover - abstract
        """Do the work; return the observation and the usage spent."""
        raise NotImplementedError

    def call(self, text: str) -> ToolOutput:
        """Run the tool and return a :class:`ToolOutput`; never raises."""
        started = time.perf_counter()
        text = text.strip()
        if not text:
            reason = f"{self.name} got an empty input"
            return ToolOutput(text=no_evidence(reason), error=reason)
        try:
            observation, usage = self.run(text)
        except ToolFailure as failure:
            return ToolOutput(
                text=no_evidence(failure.reason),
                usage=failure.usage or Usage(requests=0),
                error=failure.reason,
                duration_s=time.perf_counter() - started,
            )
        except Exception as error:  # a tool must never crash a run
            reason = f"{self.name} failed: {type(error).__name__}: {error}"
            return ToolOutput(
                text=no_evidence(reason), error=reason, duration_s=time.perf_counter() - started
            )
        elapsed = time.perf_counter() - started
        if not observation.strip():
            reason = f"{self.name} returned nothing for {text!r}"
            return ToolOutput(
                text=no_evidence(reason), usage=usage, error=reason, duration_s=elapsed
            )
        return ToolOutput(text=observation, usage=usage, duration_s=elapsed)

    def __call__(self, text: str) -> str:
        """The observation for ``text`` (a "No evidence found" text on failure)."""
        return self.call(text).text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def invoke(tool: Tool, text: str) -> ToolOutput:
    """Call any tool and return a :class:`ToolOutput`, with usage when the tool reports it.

    Plain callables that follow the :class:`Tool` protocol are supported; if one raises
    despite the contract, the exception becomes a "No evidence found" observation.

    Example:
        >>> from tablereason.tools.calculator import Calculator
        >>> invoke(Calculator(), "2 ** 10").text
        '1024'
    """
    if isinstance(tool, BaseTool):
        return tool.call(text)
    started = time.perf_counter()
    try:
        observation = tool(text)
    except Exception as error:
        reason = f"{tool.name} failed: {type(error).__name__}: {error}"
        return ToolOutput(
            text=no_evidence(reason), error=reason, duration_s=time.perf_counter() - started
        )
    elapsed = time.perf_counter() - started
    if is_no_evidence(observation):
        reason = observation[len(NO_EVIDENCE) :].lstrip(": ") or "no reason given"
        return ToolOutput(text=observation, error=reason, duration_s=elapsed)
    return ToolOutput(text=observation, duration_s=elapsed)


class FailingTool(BaseTool):
    """A stand-in that always fails, under another tool's name (for robustness tests).

    Args:
        tool: The tool to impersonate (its name and description are kept).
        reason: The failure reason every call reports.

    Example:
        >>> from tablereason.tools.calculator import Calculator
        >>> FailingTool(Calculator())("1 + 1")
        'No evidence found: Calculator is unavailable'
    """

    def __init__(self, tool: Tool, reason: str | None = None) -> None:
        self.name = tool.name
        self.description = tool.description
        self.reason = reason or f"{tool.name} is unavailable"

    def run(self, text: str) -> tuple[str, Usage]:
        """Always fail."""
        raise ToolFailure(self.reason)


def describe(tools: list[Tool] | tuple[Tool, ...]) -> str:
    """One ``Name[input]: description`` line per tool, for planner prompts.

    Example:
        >>> from tablereason.tools.calculator import Calculator
        >>> describe([Calculator()]).startswith("Calculator[input]: ")
        True
    """
    return "\n".join(f"{t.name}[input]: {t.description}" for t in tools)
