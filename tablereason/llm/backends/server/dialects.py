"""How each kind of server is sent a constraint: the request fields, and the reply read back.

A dialect is a function ``(constraint, endpoint) -> Sent | None``: the body fields that
carry the constraint to that server, and how its reply becomes the reply text, or None
when the server cannot express it (the constraint is then not sent; the reply is still
checked, see :mod:`~tablereason.llm.backends.enforcement`).

* llama.cpp's ``llama-server``: ``grammar`` (GBNF), or ``json_schema`` for a bare schema
  (it converts schemas itself); both endpoints.
* ``python -m llama_cpp.server`` (llama-cpp-python): ``grammar`` only, the one field both
  its endpoints read (it has no ``json_schema`` field and drops fields it does not know);
  a JSON schema goes as the grammar llama-cpp-python's converter writes.
* vLLM: ``structured_outputs`` with ``choice``, ``regex`` (without the ``^`` and ``$``
  that a whole match makes redundant), ``json`` or ``grammar`` (the
  ``guided_*`` fields were removed in 0.12 and are ignored since); a slot after free text
  goes as a grammar.
* OpenAI: ``response_format`` of type ``json_schema`` with ``strict: true``, chat only. The
  root of a strict schema must be an object, so a choice is sent as
  ``{"answer": <enum>}`` and any other root as ``{"value": ...}``, and unwrapped from the
  reply. A schema outside the strict subset (every object closed, every property
  required), a regular expression, a grammar or a slot after free text is not sent.
* Ollama: its ``format`` (a JSON schema). Through Ollama's OpenAI-compatible API, which is
  what this client speaks, that is ``response_format`` of type ``json_schema``: the API reads
  ``json_schema.schema`` into ``format`` and ignores a top-level ``format`` (ollama/ollama,
  ``openai/openai.go``, ``FromChatRequest``); chat only. A choice is an enum schema (the
  reply, a JSON string, is unwrapped).

Example:
    >>> from tablereason.llm.constraints import OneOf
    >>> vllm(OneOf(options=("yes", "no")), "chat").fields
    {'structured_outputs': {'choice': ['yes', 'no']}}
    >>> openai(OneOf(options=("yes", "no"), after="Answer: "), "chat") is None
    True
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tablereason.errors import MissingDependencyError
from tablereason.llm.constraints import Constraint, JSONSchema, OneOf, Regex, to_gbnf
from tablereason.llm.constraints.regex import unanchored

Endpoint = Literal["chat", "completion"]
SCHEMA_NAME = "reply"


def _as_is(text: str) -> str:
    return text


@dataclass(frozen=True)
class Sent:
    """What goes to the server for one constraint, and how its reply is read back.

    Attributes:
        fields: Body fields to add to the request.
        unwrap: From the server's reply text to the reply the constraint is about.
    """

    fields: dict[str, Any]
    unwrap: Callable[[str], str] = field(default=_as_is)


Dialect = Callable[[Constraint, Endpoint], "Sent | None"]


def _grammar(constraint: Constraint) -> str | None:
    try:
        return to_gbnf(constraint)
    except MissingDependencyError:  # a JSON schema, without the converter here
        return None


def llama_cpp(constraint: Constraint, endpoint: Endpoint) -> Sent | None:
    """llama.cpp's own server (``llama-server``)."""
    if isinstance(constraint, JSONSchema) and constraint.after is None:
        return Sent({"json_schema": constraint.json_schema})
    grammar = _grammar(constraint)
    return None if grammar is None else Sent({"grammar": grammar})


def llama_cpp_python(constraint: Constraint, endpoint: Endpoint) -> Sent | None:
    """llama-cpp-python's server (``python -m llama_cpp.server``)."""
    grammar = _grammar(constraint)
    return None if grammar is None else Sent({"grammar": grammar})


def vllm(constraint: Constraint, endpoint: Endpoint) -> Sent | None:
    """VLLM (0.12 and later)."""
    if constraint.after is not None:
        grammar = _grammar(constraint)
        return None if grammar is None else Sent({"structured_outputs": {"grammar": grammar}})
    if isinstance(constraint, OneOf):
        spec: dict[str, Any] = {"choice": list(constraint.options)}
    elif isinstance(constraint, Regex):
        spec = {"regex": unanchored(constraint.pattern)}  # its match is whole too
    elif isinstance(constraint, JSONSchema):
        spec = {"json": constraint.json_schema}
    else:
        spec = {"grammar": constraint.gbnf}
    return Sent({"structured_outputs": spec})


def _strict(schema: Any) -> bool:
    """Whether every object in ``schema`` is closed and requires all its properties."""
    if isinstance(schema, list):
        return all(_strict(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required") or ()) != set(properties):
            return False
    return all(_strict(v) for k, v in schema.items() if k not in ("enum", "const", "default"))


def _unwrap_key(key: str) -> Callable[[str], str]:
    def unwrap(text: str) -> str:
        try:
            value = json.loads(text)
        except ValueError:
            return text  # not what was asked for: the check says so
        if not isinstance(value, dict) or set(value) != {key}:
            return text
        inner = value[key]
        return inner if isinstance(inner, str) and key == "answer" else json.dumps(inner)

    return unwrap


def _response_format(schema: dict[str, Any], strict: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": SCHEMA_NAME, "schema": schema}
    if strict:
        spec["strict"] = True
    return {"response_format": {"type": "json_schema", "json_schema": spec}}


def openai(constraint: Constraint, endpoint: Endpoint) -> Sent | None:
    """OpenAI's API (structured outputs)."""
    if endpoint != "chat" or constraint.after is not None:
        return None
    if isinstance(constraint, OneOf):
        enum = {"type": "string", "enum": list(constraint.options)}
        wrapped = _closed({"answer": enum})
        return Sent(_response_format(wrapped, strict=True), _unwrap_key("answer"))
    if not isinstance(constraint, JSONSchema) or not _strict(constraint.json_schema):
        return None
    schema = constraint.json_schema
    if schema.get("type") == "object":
        return Sent(_response_format(schema, strict=True))
    return Sent(_response_format(_closed({"value": schema}), strict=True), _unwrap_key("value"))


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _unwrap_string(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def ollama(constraint: Constraint, endpoint: Endpoint) -> Sent | None:
    """Ollama, through its OpenAI-compatible API."""
    if endpoint != "chat" or constraint.after is not None:
        return None
    if isinstance(constraint, OneOf):
        enum = {"type": "string", "enum": list(constraint.options)}
        return Sent(_response_format(enum, strict=False), _unwrap_string)
    if isinstance(constraint, JSONSchema):
        return Sent(_response_format(constraint.json_schema, strict=False))
    return None


def nothing(constraint: Constraint, endpoint: Endpoint) -> Sent | None:
    """A server that is not known to honour any constraint field: nothing is sent."""
    return None
