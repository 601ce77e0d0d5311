"""Constraints on what a model may write, their grammars and the check of a reply.

The kinds (:mod:`.kinds`): :class:`OneOf`, :class:`Regex`, :class:`JSONSchema`,
:class:`Grammar`, each optionally ``after`` a marker (free text first, then the slot).
:func:`to_gbnf` writes one as a GBNF grammar, :func:`satisfies` checks a reply,
:func:`slot` cuts out the constrained part. :mod:`.gbnf` builds grammars safely
(:func:`~.gbnf.literal` quotes a column name exactly).

Example:
    >>> from tablereason.llm.constraints import OneOf, satisfies
    >>> satisfies(OneOf(options=("<END>", "f_select_row")), "<END>")
    True
"""

from tablereason.llm.constraints.convert import (
    describe,
    satisfies,
    slot,
    slot_grammar,
    to_gbnf,
    viable,
)
from tablereason.llm.constraints.kinds import (
    KINDS,
    Constraint,
    Grammar,
    JSONSchema,
    Kind,
    OneOf,
    Regex,
)

__all__ = [
    "KINDS",
    "Constraint",
    "Grammar",
    "JSONSchema",
    "Kind",
    "OneOf",
    "Regex",
    "describe",
    "satisfies",
    "slot",
    "slot_grammar",
    "to_gbnf",
    "viable",
]
