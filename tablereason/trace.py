"""Traces: everything a method did, step by step, with every intermediate table.

A :class:`Trace` is data. It serialises to JSON (tables as header, rows and
caption), so a saved trace can be inspected or replayed without a model.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from tablereason.llm.base import Usage

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table import Table


class TraceStep(BaseModel):
    """One step of a method run.

    Attributes:
        kind: What happened: ``"plan"``, ``"operation"``, ``"answer"``, ``"module"``,
            ``"tool"``, ``"program"``...
        name: The operation, module or tool name (``"select_rows"``).
        prompt_name: The prompt template used, when a model was asked.
        raw: Raw model completion(s), kept even when parsing failed.
        arguments: Parsed, typed arguments of the decision (JSON-able).
        table: The table after the step, when the step produced one.
        usage: Tokens and requests spent by this step.
        duration_s: Wall time of the step.
        error: What went wrong, when the step failed or was rejected.
        note: Free-form detail (fallback taken, rule that rejected, ...).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: str
    name: str
    prompt_name: str | None = None
    raw: list[str] = Field(default_factory=list)
    arguments: dict[str, Any] = Field(default_factory=dict)
    table: Any = None
    usage: Usage = Field(default_factory=lambda: Usage(requests=0))
    duration_s: float = 0.0
    error: str | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; the table becomes ``{"caption", "header", "rows"}``."""
        data = self.model_dump(exclude={"table"})
        table: Table | None = self.table
        if table is not None:
            header, *rows = table.to_records()
            data["table"] = {"caption": table.caption, "header": header, "rows": rows}
        else:
            data["table"] = None
        return data


class Trace(BaseModel):
    """The steps of one method run, in order."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    method: str = ""
    question: str = ""
    steps: list[TraceStep] = Field(default_factory=list)

    def add(self, step: TraceStep) -> TraceStep:
        """Append a step and return it."""
        self.steps.append(step)
        return step

    @property
    def usage(self) -> Usage:
        """Summed usage of every step."""
        total = Usage(requests=0)
        for step in self.steps:
            total = total + step.usage
        return total

    @property
    def tables(self) -> list[Table]:
        """Every intermediate table, in order."""
        return [s.table for s in self.steps if s.table is not None]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form of the whole trace."""
        return {
            "method": self.method,
            "question": self.question,
            "steps": [s.to_dict() for s in self.steps],
            "usage": self.usage.model_dump(),
        }

    def to_json(self, **kwargs: Any) -> str:
        """The trace as a JSON string."""
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)


class Prediction(BaseModel):
    """A method's answer with the trace that produced it.

    ``answer`` is a string, or a list of strings for list answers (WikiTQ).
    ``error`` is set when the run failed; the answer is then empty and counts as wrong.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    answer: str | list[str] = ""
    trace: Trace = Field(default_factory=Trace)
    error: str | None = None

    @property
    def tables(self) -> list[Table]:
        """Every intermediate table of the run."""
        return self.trace.tables
