"""JSON schemas: checking a schema, checking a document against it, and its GBNF form.

Documents are checked with the ``jsonschema`` package (the draft the schema names in
``$schema``, else 2020-12). Parsing is lenient where servers' JSON grammars are: control
characters inside strings are accepted (llama.cpp's grammars allow them), ``NaN`` and
``Infinity`` are not (they are not JSON). The GBNF form comes from llama-cpp-python's
converter (``llama_cpp.llama_grammar.json_schema_to_gbnf``), when it is installed; it fixes
the key order and spacing, so the grammar is stricter than the check.

Example:
    >>> matches({"type": "array", "items": {"type": "integer"}}, "[1, 2]")
    True
    >>> matches({"type": "array", "items": {"type": "integer"}}, '["1"]')
    False
"""

from __future__ import annotations

import functools
import json
from typing import Any

from tablereason.errors import MissingDependencyError
from tablereason.llm.errors import ConstraintError


def _canonical(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@functools.lru_cache(maxsize=256)
def _validator(canonical: str) -> Any:
    import jsonschema

    schema = json.loads(canonical)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as error:
        raise ConstraintError(f"not a valid JSON schema: {error.message}") from None
    return cls(schema)


def check_schema(schema: Any) -> None:
    """Refuse what is not a JSON schema object.

    Raises:
        ConstraintError: Not a dict, not serialisable as JSON, or invalid as a schema.
    """
    if not isinstance(schema, dict):
        raise ConstraintError(f"a JSON schema is an object, got {type(schema).__name__}")
    try:
        canonical = _canonical(schema)
    except (TypeError, ValueError) as error:
        raise ConstraintError(f"the JSON schema is not JSON: {error}") from None
    _validator(canonical)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse(text: str) -> Any:
    """The JSON value of ``text`` (control characters in strings allowed).

    Raises:
        ValueError: Not one JSON document.
    """
    return json.loads(text, strict=False, parse_constant=_no_constant)


def matches(schema: dict[str, Any], text: str) -> bool:
    """Whether ``text`` is one JSON document valid under ``schema``."""
    try:
        value = parse(text)
    except (ValueError, RecursionError):
        return False
    return bool(_validator(_canonical(schema)).is_valid(value))


def to_gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar of ``schema``, by llama-cpp-python's converter.

    Raises:
        MissingDependencyError: llama-cpp-python is not installed.
        ConstraintError: The converter cannot express the schema.
    """
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf
    except ImportError as error:
        raise MissingDependencyError(
            "turning a JSON schema into a grammar needs llama-cpp-python: "
            "pip install 'tablereason[local]' (servers that take a JSON schema need nothing)"
        ) from error
    try:
        return str(json_schema_to_gbnf(json.dumps(schema)))  # key order kept: it is the order
    except Exception as error:  # the converter raises bare exceptions on what it lacks
        raise ConstraintError(f"the JSON schema cannot be written as a grammar: {error}") from None
