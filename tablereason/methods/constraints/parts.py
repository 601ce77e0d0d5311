r"""Small builders for GBNF grammars: sequences, choices, bounded lists, number ranges.

Every grammar the methods send is built from these and the syntax tree of
:mod:`tablereason.llm.constraints.gbnf`, never by pasting names into grammar text, so a
column name with quotes, backslashes or line breaks is matched exactly.

Example:
    >>> from tablereason.llm.constraints.gbnf import dump
    >>> print(dump({"root": listed(one_of(["a", "b"]), ", ", most=2)}))
    root ::= ("a" | "b") (", " ("a" | "b"))?
    >>> satisfies(grammar({"root": numbers(1, 12)}), "12")
    True
"""

from __future__ import annotations

from tablereason.llm.constraints import Grammar, satisfies
from tablereason.llm.constraints.gbnf import Alt, Chars, Expr, Lit, Repeat, Rules, Seq, dump, one_of

__all__ = [
    "NEWLINE",
    "Chars",
    "Expr",
    "Lit",
    "Rules",
    "alt",
    "grammar",
    "listed",
    "numbers",
    "one_of",
    "optional",
    "satisfies",
    "seq",
    "text_of",
]

NEWLINE = Lit("\n")


def seq(*items: Expr | str) -> Expr:
    """Items one after another; a ``str`` is a literal."""
    parts = tuple(Lit(i) if isinstance(i, str) else i for i in items)
    return parts[0] if len(parts) == 1 else Seq(parts)


def alt(*options: Expr | str) -> Expr:
    """One of the options; a ``str`` is a literal."""
    parts = tuple(Lit(o) if isinstance(o, str) else o for o in options)
    return parts[0] if len(parts) == 1 else Alt(parts)


def optional(item: Expr | str) -> Expr:
    """``item`` or nothing."""
    return Repeat(Lit(item) if isinstance(item, str) else item, 0, 1)


def listed(item: Expr, separator: str, *, most: int, least: int = 1) -> Expr:
    """``least`` to ``most`` items with ``separator`` between them."""
    rest = Repeat(seq(separator, item), max(0, least - 1), max(0, most - 1))
    return seq(item, rest) if most > 1 else item


MOST_SPELLED = 200
"""Longest bounded repetition written out (longer bounds are written without a bound:
a grammar's text spells each count out, and its parser reads them nested)."""


def text_of(excluded: str, *, least: int = 1, most: int | None) -> Expr:
    """``least`` to ``most`` characters (``None``: any number), none of them in ``excluded``."""
    if most is not None and most > MOST_SPELLED:
        most = None
    ranges = tuple((ord(c), ord(c)) for c in sorted(set(excluded)))
    return Repeat(Chars(ranges, negated=True), least, most)


def numbers(low: int, high: int) -> Expr:
    """Exactly the decimal numbers ``low`` to ``high`` (written as a trie of their digits)."""
    return one_of([str(i) for i in range(low, high + 1)])


def grammar(rules: Rules, *, after: str | None = None) -> Grammar:
    """The :class:`~tablereason.llm.constraints.Grammar` of ``rules`` (``root`` first)."""
    return Grammar(gbnf=dump(rules), after=after)
