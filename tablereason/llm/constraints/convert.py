"""Constraints as grammars, and the check of a reply against its constraint.

:func:`to_gbnf` writes any constraint as one GBNF grammar (with ``after``: a grammar that
reads any text up to the first occurrence of the marker, then the slot's grammar);
:func:`satisfies` says whether a reply meets its constraint, :func:`viable` whether it
could still be continued to (a reply cut by the token limit or a stop string), and
:func:`slot` returns the part of a reply that is constrained.

Example:
    >>> from tablereason.llm.constraints.kinds import OneOf, Regex
    >>> c = OneOf(options=("yes", "no"), after="Answer: ")
    >>> satisfies(c, "The table says so. Answer: yes"), satisfies(c, "Answer: maybe")
    (True, False)
    >>> slot(c, "It is. Answer: no")
    'no'
    >>> print(to_gbnf(Regex(pattern="[0-9]+")))
    root ::= [0-9] [0-9]*
"""

from __future__ import annotations

import functools

from tablereason.errors import MissingDependencyError
from tablereason.llm.constraints import gbnf, json_schema
from tablereason.llm.constraints.gbnf import Alt, Chars, Expr, Lit, Ref, Rules, Seq
from tablereason.llm.constraints.kinds import Constraint, Grammar, JSONSchema, OneOf, Regex
from tablereason.llm.constraints.recognizer import Recognizer, compiled
from tablereason.llm.constraints.regex import read


def slot_rules(constraint: Constraint) -> Rules:
    """The grammar of the slot alone (``after`` left out).

    Raises:
        MissingDependencyError: A JSON schema, without llama-cpp-python's converter.
    """
    if isinstance(constraint, OneOf):
        return {"root": gbnf.one_of(constraint.options)}
    if isinstance(constraint, Regex):
        return {"root": read(constraint.pattern)}
    if isinstance(constraint, JSONSchema):
        return gbnf.parse(json_schema.to_gbnf(constraint.json_schema))
    return gbnf.parse(constraint.gbnf)


def _next_state(marker: str, failure: list[int], state: int, char: str) -> int:
    """Characters of ``marker`` matched after reading ``char`` with ``state`` matched."""
    while state and marker[state] != char:
        state = failure[state - 1]
    return state + 1 if marker[state] == char else 0


def free_then(marker: str, slot: Rules) -> Rules:
    """Rules for: any text up to the first occurrence of ``marker``, the marker, the slot.

    The free part is a Knuth-Morris-Pratt automaton of the marker written as rules
    (``free-i``: ``i`` characters of the marker matched), so it reads any text that does
    not contain the marker and nothing else; the slot's rules are renamed ``slot-...``.
    """
    failure = [0] * len(marker)  # longest proper prefix that is also a suffix
    matched = 0
    for i in range(1, len(marker)):
        while matched and marker[i] != marker[matched]:
            matched = failure[matched - 1]
        if marker[i] == marker[matched]:
            matched += 1
        failure[i] = matched
    rules: Rules = {"root": Ref("free-0")}
    alphabet = sorted(set(marker))
    for state in range(len(marker)):
        options: list[Expr] = []
        moving = []
        for char in alphabet:
            target = _next_state(marker, failure, state, char)
            if target == 0:
                continue
            moving.append(char)
            then = "slot-root" if target == len(marker) else f"free-{target}"
            options.append(Seq((Lit(char), Ref(then))))
        others = Chars(tuple((ord(c), ord(c)) for c in moving), negated=True)
        options.append(Seq((others, Ref("free-0"))))
        rules[f"free-{state}"] = Alt(tuple(options))
    rules.update(gbnf.renamed(slot, "slot-"))
    return rules


def to_gbnf(constraint: Constraint) -> str:
    """The GBNF grammar of a whole reply that meets ``constraint``.

    Raises:
        MissingDependencyError: A JSON schema, without llama-cpp-python's converter.

    Example:
        >>> print(to_gbnf(OneOf(options=("a", "b"), after="=")))
        root ::= free-0
        free-0 ::= "=" slot-root | [^=] free-0
        slot-root ::= "a" | "b"
    """
    return _gbnf(constraint)


@functools.lru_cache(maxsize=256)
def _gbnf(constraint: Constraint) -> str:
    rules = slot_rules(constraint)
    return gbnf.dump(rules if constraint.after is None else free_then(constraint.after, rules))


def slot_grammar(constraint: Constraint) -> str:
    """The GBNF grammar of the slot alone (``after`` left out).

    Raises:
        MissingDependencyError: A JSON schema, without llama-cpp-python's converter.
    """
    return _gbnf(_bare(constraint))


def slot(constraint: Constraint, text: str) -> str | None:
    """The constrained part of ``text``: after the first ``after``, or all of it.

    None when ``after`` is set and does not occur in ``text``.
    """
    if constraint.after is None:
        return text
    at = text.find(constraint.after)
    return None if at < 0 else text[at + len(constraint.after) :]


@functools.lru_cache(maxsize=256)
def _slot_recognizer(constraint: Constraint) -> Recognizer:
    return compiled(slot_grammar(constraint))


def satisfies(constraint: Constraint, text: str) -> bool:
    r"""Whether ``text`` meets ``constraint``.

    A choice: the slot is one of the options, exactly. A regular expression or a grammar:
    the slot matches it as a whole (checked by :mod:`.recognizer`, in bounded time). A
    JSON schema: the slot is one JSON document valid under it (see :mod:`.json_schema`).

    Raises:
        ConstraintError: The grammar is too ambiguous to check in bounded time.

    Example:
        >>> satisfies(Regex(pattern=r"\d{4}"), "1985"), satisfies(Regex(pattern=r"\d{4}"), "85")
        (True, False)
    """
    part = slot(constraint, text)
    if part is None:
        return False
    if isinstance(constraint, OneOf):
        return part in constraint.options
    if isinstance(constraint, JSONSchema):
        return json_schema.matches(constraint.json_schema, part)
    return _slot_recognizer(_bare(constraint)).accepts(part)


def viable(constraint: Constraint, text: str) -> bool:
    """Whether ``text`` meets ``constraint`` or could be continued until it does.

    A reply cut by the token limit or a stop string inside its slot is viable; a reply
    the constraint never allowed is not. A JSON slot counts as viable when
    llama-cpp-python's converter is not there to tell.
    """
    part = slot(constraint, text)
    if part is None:
        return True  # the marker may still come
    if isinstance(constraint, OneOf):
        return any(option.startswith(part) for option in constraint.options)
    try:
        return _slot_recognizer(_bare(constraint)).viable(part)
    except MissingDependencyError:
        return True


def _bare(constraint: Constraint) -> Constraint:
    return constraint if constraint.after is None else constraint.model_copy(update={"after": None})


def describe(constraint: Constraint) -> str:
    """A short description for messages.

    Example:
        >>> describe(OneOf(options=("yes", "no"), after="Answer: "))
        "one of ['yes', 'no'] after 'Answer: '"
    """
    if isinstance(constraint, OneOf):
        what = f"one of {list(constraint.options)[:8]}"
    elif isinstance(constraint, Regex):
        what = f"the regular expression {constraint.pattern!r}"
    elif isinstance(constraint, JSONSchema):
        what = "JSON valid under the given schema"
    else:
        assert isinstance(constraint, Grammar)
        what = "the given GBNF grammar"
    return what if constraint.after is None else f"{what} after {constraint.after!r}"
