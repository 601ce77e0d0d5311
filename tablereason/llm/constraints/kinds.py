r"""What a reply may be: one of a list, a regular expression, a JSON schema, a GBNF grammar.

Each kind is a frozen pydantic value, checked when built (a pattern outside the supported
subset, a grammar that does not parse, a schema that is not one fail at once with
:class:`~tablereason.llm.errors.ConstraintError`), and serialises with its ``kind``, so
``Constraint`` reads any of them back.

Every kind constrains the *slot*: the whole reply, or, with ``after``, the part of the
reply after the first occurrence of ``after``; what comes before it is free. So "reason
freely, then write ``Answer:`` and one of these" is
``OneOf(options=(...), after="Answer: ")``.

Example:
    >>> from pydantic import TypeAdapter
    >>> c = OneOf(options=("yes", "no"), after="Answer: ")
    >>> TypeAdapter(Constraint).validate_json(c.model_dump_json()) == c
    True
    >>> Regex(pattern=r"row \d+").kind
    'regex'
"""

from __future__ import annotations

import copy
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Kind = Literal["choice", "regex", "json", "grammar"]
KINDS: tuple[Kind, ...] = ("choice", "regex", "json", "grammar")


class _Slot(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    after: str | None = Field(default=None, min_length=1)
    """Free text up to the first occurrence of this marker comes first; the constrained
    slot follows it. ``None``: the whole reply is the slot."""


class OneOf(_Slot):
    """The slot is exactly one of ``options``.

    Example:
        >>> OneOf(options=["name", "year"]).options
        ('name', 'year')
    """

    kind: Literal["choice"] = "choice"
    options: tuple[str, ...] = Field(min_length=1)

    @field_validator("options")
    @classmethod
    def _distinct(cls, options: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(options))


class Regex(_Slot):
    """The slot matches ``pattern`` as a whole (the subset of :mod:`.regex`).

    Example:
        >>> Regex(pattern="(?<=a)b")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tablereason.llm.errors.ConstraintError: ... position 1: a group with options ...
    """

    kind: Literal["regex"] = "regex"
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _supported(cls, pattern: str) -> str:
        from tablereason.llm.constraints.regex import read

        read(pattern)
        return pattern


class JSONSchema(_Slot):
    """The slot is a JSON document valid under ``json_schema``.

    The schema is copied when the value is built, so changing the caller's dict later
    changes nothing here.

    Example:
        >>> JSONSchema(json_schema={"type": "integer"}).kind
        'json'
    """

    kind: Literal["json"] = "json"
    json_schema: dict[str, Any]

    @field_validator("json_schema")
    @classmethod
    def _a_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        from tablereason.llm.constraints.json_schema import check_schema

        check_schema(schema)
        return copy.deepcopy(schema)

    def __hash__(self) -> int:
        return hash((self.kind, self.after, json.dumps(self.json_schema, sort_keys=True)))


class Grammar(_Slot):
    """The slot matches the GBNF grammar ``gbnf`` (from its ``root`` rule).

    Example:
        >>> Grammar(gbnf='root ::= "a" root | "b"').kind
        'grammar'
    """

    kind: Literal["grammar"] = "grammar"
    gbnf: str

    @field_validator("gbnf")
    @classmethod
    def _parses(cls, gbnf: str) -> str:
        from tablereason.llm.constraints.recognizer import compiled

        compiled(gbnf)
        return gbnf


Constraint = Annotated[OneOf | Regex | JSONSchema | Grammar, Field(discriminator="kind")]
"""Any constraint, read by its ``kind``."""
