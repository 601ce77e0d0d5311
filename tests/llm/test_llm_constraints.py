"""Constraints as values, their grammars, and the check of a reply (``satisfies``)."""

from __future__ import annotations

import json
import random
import re

import grammar_oracle
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from tablereason.llm import Grammar, JSONSchema, OneOf, Regex, Request, satisfies, slot, to_gbnf
from tablereason.llm.base import Constraint
from tablereason.llm.constraints import gbnf, viable
from tablereason.llm.constraints.convert import free_then, slot_grammar
from tablereason.llm.constraints.recognizer import compiled
from tablereason.llm.errors import ConstraintError

CONSTRAINT = TypeAdapter(Constraint)

EXAMPLES = [
    OneOf(options=("Year", 'col "A"', "Größe")),
    OneOf(options=("yes", "no"), after="Answer: "),
    Regex(pattern=r"row \d+(, row \d+)*"),
    Regex(pattern=r"[a-z]+", after="\n"),
    JSONSchema(json_schema={"type": "object", "properties": {"a": {"type": "integer"}}}),
    JSONSchema(json_schema={"type": "array", "items": {"enum": [1, 2]}}, after="=> "),
    Grammar(gbnf='root ::= "f(" [0-9]+ ")" | "<END>"'),
    Grammar(gbnf='root ::= "x"+', after="aab"),
]


@pytest.mark.parametrize("constraint", EXAMPLES, ids=lambda c: f"{c.kind}-{c.after is not None}")
def test_constraints_are_frozen_serialisable_values(constraint: Constraint) -> None:
    again = CONSTRAINT.validate_json(constraint.model_dump_json())
    assert again == constraint and type(again) is type(constraint)
    assert hash(again) == hash(constraint)
    with pytest.raises(ValidationError):
        constraint.after = "x"  # type: ignore[misc]
    request = Request(prompt="q", constraint=constraint)
    assert Request.model_validate_json(request.model_dump_json()) == request


def test_a_schema_is_copied_so_the_callers_dict_cannot_change_it() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    constraint = JSONSchema(json_schema=schema)
    schema["properties"]["a"]["type"] = "string"
    assert constraint.json_schema["properties"]["a"]["type"] == "integer"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "choice", "options": []}, "at least 1"),
        ({"kind": "choice", "options": ["a"], "after": ""}, "at least 1"),
        ({"kind": "choice", "options": ["a"], "colour": "red"}, "Extra inputs"),
    ],
)
def test_malformed_constraints_are_validation_errors(fields, message) -> None:
    with pytest.raises(ValidationError, match=message):
        CONSTRAINT.validate_python(fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "regex", "pattern": "(?<=a)b"}, "a group with options"),
        ({"kind": "grammar", "gbnf": "root ::= root"}, "left recursion"),
        ({"kind": "grammar", "gbnf": 'start ::= "a"'}, "no 'root' rule"),
        ({"kind": "json", "json_schema": {"type": "integr"}}, "not a valid JSON schema"),
        ({"kind": "json", "json_schema": {"x": {1, 2}}}, "is not JSON"),
    ],
)
def test_constraints_that_cannot_be_used_fail_when_built(fields, message) -> None:
    """Our own error, as it is (not inside pydantic's), built directly or read."""
    kind = {"regex": Regex, "grammar": Grammar, "json": JSONSchema}[fields["kind"]]
    with pytest.raises(ConstraintError, match=re.escape(message)):
        kind(**{k: v for k, v in fields.items() if k != "kind"})
    with pytest.raises(ConstraintError, match=re.escape(message)):
        Request.model_validate({"prompt": "q", "constraint": fields})


def test_the_marker_splits_free_text_from_the_slot() -> None:
    constraint = OneOf(options=("yes", "no"), after="Answer: ")
    assert slot(constraint, "The row says 1911. Answer: yes") == "yes"
    assert slot(constraint, "Answer: no Answer: yes") == "no Answer: yes"  # the first marker
    assert slot(constraint, "no marker") is None
    assert satisfies(constraint, "Answer: yes") and satisfies(constraint, "a\nb\nAnswer: no")
    assert not satisfies(constraint, "Answer: maybe") and not satisfies(constraint, "yes")
    assert not satisfies(constraint, "Answer: yes ") and not satisfies(constraint, "Answer:yes")


def test_satisfies_for_each_kind() -> None:
    assert satisfies(OneOf(options=("a b",)), "a b") and not satisfies(OneOf(options=("a",)), "A")
    assert satisfies(Regex(pattern=r"\d{4}"), "1985") and not satisfies(Regex(pattern=r"\d"), "12")
    schema = JSONSchema(json_schema={"type": "object", "required": ["a"]})
    assert satisfies(schema, '{"a": 1}') and satisfies(schema, ' {"a": "x\ny"} ')
    for bad in ['{"b": 1}', "[1]", '{"a": 1} {"a": 2}', '{"a": NaN}', "{'a': 1}", ""]:
        assert not satisfies(schema, bad), bad
    grammar = Grammar(gbnf='root ::= "f(" [0-9]+ ")"')
    assert satisfies(grammar, "f(12)") and not satisfies(grammar, "f()")


def test_viable_tells_a_cut_reply_from_an_ignored_constraint() -> None:
    yes_no = OneOf(options=("yes", "no"), after="A: ")
    assert viable(yes_no, "still thinking") and viable(yes_no, "A: ye")
    assert not viable(yes_no, "A: maybe")
    schema = JSONSchema(json_schema={"type": "object", "properties": {"a": {"type": "integer"}}})
    assert viable(schema, '{"a": 1') and not viable(schema, "Sure! Here is")
    assert viable(Regex(pattern=r"\d+-\d+"), "12-") and not viable(Regex(pattern=r"\d+"), "x")


# -- the grammar of each kind agrees with satisfies -----------------------------------------


@pytest.mark.parametrize("constraint", EXAMPLES, ids=lambda c: f"{c.kind}-{c.after is not None}")
def test_the_grammar_of_a_constraint_accepts_what_satisfies_accepts(constraint) -> None:
    rules = gbnf.parse(to_gbnf(constraint))
    recognizer = compiled(to_gbnf(constraint))
    rng = random.Random(7)
    for _ in range(40):
        text = grammar_oracle.sample(rules, rng, depth=30)
        if text is None:
            continue
        assert recognizer.accepts(text), text
        assert satisfies(constraint, text), text
        for cut in (text[:-1], text + "}", "Z" + text[1:]):
            if recognizer.accepts(cut):  # the grammar may be looser (JSON spacing is not)
                assert satisfies(constraint, cut), cut


MARKERS = st.text(alphabet="ab", min_size=1, max_size=4)
FREE = st.text(alphabet="ab c", max_size=10)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MARKERS, FREE, st.sampled_from(["x", "y", "yy", "a", "ab", ""]))
def test_the_free_text_grammar_agrees_with_splitting_at_the_first_marker(marker, free, tail):
    """``free_then`` reads exactly: text without the marker, the marker, then the slot."""
    constraint = OneOf(options=("x", "yy", "a"), after=marker)
    recognizer = compiled(to_gbnf(constraint))
    for text in (free + marker + tail, free + tail, marker + free + marker + tail):
        assert recognizer.accepts(text) == satisfies(constraint, text), (marker, text)
    rules = free_then(marker, {"root": gbnf.one_of(["x", "yy", "a"])})
    assert gbnf.dump(rules) == to_gbnf(constraint)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=5), st.text(max_size=8))
def test_a_choice_grammar_agrees_with_python_equality(options, text) -> None:
    constraint = OneOf(options=tuple(options))
    recognizer = compiled(slot_grammar(constraint))
    for candidate in [text, *options, options[0] + text]:
        assert (
            recognizer.accepts(candidate)
            == (candidate in options)
            == satisfies(constraint, candidate)
        )


JSON_SCHEMAS = [
    {
        "type": "object",
        "properties": {
            "column": {"enum": ["a", "b c"]},
            "rows": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["column", "rows"],
    },
    {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "n": {"type": "number"}},
        "required": ["ok"],
        "additionalProperties": False,
    },
]
JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-50, 50),
        st.sampled_from(["a", "b c", "x"]),
        st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["column", "rows", "ok", "n", "z"]), inner, max_size=3),
    ),
    max_leaves=6,
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(JSON_SCHEMAS), JSON_VALUES)
def test_json_agrees_with_the_schema_check_and_the_grammar_never_accepts_more(schema, value):
    import jsonschema

    constraint = JSONSchema(json_schema=schema)
    text = json.dumps(value)
    valid = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert satisfies(constraint, text) == valid
    if compiled(slot_grammar(constraint)).accepts(text):  # stricter in spacing and key order
        assert valid


def test_to_gbnf_of_each_kind_is_what_llama_cpp_reads() -> None:
    assert to_gbnf(OneOf(options=("a", 'b"'))) == 'root ::= "a" | "b\\""'
    assert to_gbnf(Regex(pattern="[0-9]{2}")) == "root ::= [0-9] [0-9]"
    assert to_gbnf(Grammar(gbnf='root ::= "z"')) == 'root ::= "z"'
    schema = to_gbnf(JSONSchema(json_schema={"type": "integer"}))
    assert schema.startswith("root ::=") and "integral-part" in schema
    assert re.search(r"^slot-root ::= ", to_gbnf(Regex(pattern="a", after="=")), re.M)
