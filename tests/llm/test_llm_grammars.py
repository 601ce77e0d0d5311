"""GBNF: the parser and printer, the recognizer, and regular expressions written as grammars.

Property tests compare the recognizer with an independent matcher (``grammar_oracle``),
and regular expressions' grammars with Python's own ``re.fullmatch``: every text a grammar
generates is accepted, and texts outside it (mutations, random texts) are refused by both.
"""

from __future__ import annotations

import random
import re
import time

import grammar_oracle
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.llm.constraints import gbnf
from tablereason.llm.constraints.gbnf import Alt, Chars, Expr, Lit, Ref, Repeat, Seq
from tablereason.llm.constraints.recognizer import MAX_STACKS, compiled
from tablereason.llm.constraints.regex import read
from tablereason.llm.errors import ConstraintError

ALPHABET = "abc-"

# -- strategies ------------------------------------------------------------------------------

literals = st.text(alphabet=ALPHABET + '"\\\n', min_size=0, max_size=3).map(Lit)
classes = st.builds(
    lambda pairs, negated: Chars(tuple(sorted((min(a, b), max(a, b)) for a, b in pairs)), negated),
    st.lists(
        st.tuples(
            st.sampled_from([ord(c) for c in ALPHABET]), st.sampled_from([ord(c) for c in "abc"])
        ),
        min_size=1,
        max_size=2,
    ),
    st.booleans(),
)
HELPER = Seq((Lit("c"), Repeat(Ref("helper"), 0, 1)))  # guarded recursion: c, cc, ccc...


def _repeat(item: Expr, low: int, span: int | None) -> Expr:
    empty = grammar_oracle.accepts({"root": item, "helper": HELPER}, "")
    body = Seq((Lit("a"), item)) if empty else item  # else left-recursive
    return Repeat(body, low, None if span is None else low + span)


def _exprs(leaves: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: Seq(tuple(xs))),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: Alt(tuple(xs))),
            st.builds(_repeat, inner, st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2))),
        ),
        max_leaves=6,
    )


grammars = _exprs(st.one_of(literals, classes, st.just(Ref("helper")))).map(
    lambda root: {"root": root, "helper": HELPER}
)
texts = st.text(alphabet=ALPHABET + "\n", max_size=8)


def _mutations(text: str, rng: random.Random) -> list[str]:
    out = [text + "a", text[:-1], "c" + text]
    if text:
        i = rng.randrange(len(text))
        out += [text[:i] + text[i + 1 :], text[:i] + rng.choice(ALPHABET) + text[i + 1 :]]
    return out


# -- the recognizer agrees with the reference matcher ---------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammars, st.lists(texts, max_size=6), st.integers(0, 2**32))
def test_the_recognizer_agrees_with_the_reference(rules, extra, seed) -> None:
    text = gbnf.dump(rules)
    reparsed = gbnf.parse(text)  # the printed form reads back: printing it again is stable
    assert gbnf.dump(gbnf.parse(gbnf.dump(reparsed))) == gbnf.dump(reparsed)
    recognizer = compiled(text)
    rng = random.Random(seed)
    generated = [s for s in (grammar_oracle.sample(rules, rng) for _ in range(4)) if s is not None]
    for sample in generated:  # every text the grammar generates is accepted
        assert recognizer.accepts(sample), (text, sample)
        for cut in range(len(sample) + 1):
            assert recognizer.viable(sample[:cut]), (text, sample, cut)
    candidates = extra + [m for s in generated for m in _mutations(s, rng)]
    for candidate in candidates:  # and others are refused exactly when the reference does
        expected = grammar_oracle.accepts(rules, candidate)
        assert recognizer.accepts(candidate) == expected, (text, candidate)
        assert grammar_oracle.accepts(reparsed, candidate) == expected, (text, candidate)


@settings(max_examples=100, deadline=None)
@given(grammars, texts)
def test_a_text_that_is_not_viable_has_no_accepted_continuation(rules, text) -> None:
    recognizer = compiled(gbnf.dump(rules))
    if not recognizer.viable(text):
        for tail in ["", "a", "b", "c", "-", "ab", "cc", "abc", "\n"]:
            assert not grammar_oracle.accepts(rules, text + tail)


# -- parsing ---------------------------------------------------------------------------------


def test_the_full_syntax_reads() -> None:
    text = r"""
# a comment
root   ::= greeting (" " name)? ws "!"{1,3}   # trailing comment
greeting ::= "hello" | "hi" |
         "hey"
name ::= [A-Z] [a-z_-]* | "\u00e9" "\x41" | "\"q\"" | [^\n\]] .
ws ::= ([ \t])*
"""
    recognizer = compiled(text)
    for ok in ["hello!", "hi Bob !!", "hey \u00e9A!!!", 'hi "q"!', "hi x]!", "hey x\n!"]:
        assert recognizer.accepts(ok), ok
    for bad in ["hello", "hi bob!", "hello!!!!", "hi \n\n!", "hi ]x!"]:
        assert not recognizer.accepts(bad), bad


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('rot ::= "a"', "no 'root' rule"),
        ("root ::= a", "undefined rule 'a'"),
        ('root ::= "a', "unterminated"),
        ("root ::= [a-", "unterminated"),
        ('root ::= "\\q"', "unknown escape"),
        ("root ::= [z-a]", "ends before it starts"),
        ('root ::= "a"{3,1}', "repetition"),
        ('root ::= "a"{5000}', "repetition"),
        ('root ::= ("a"', "expected ')'"),
        ('root ::= "a" )', "unexpected text"),
        ('root "a"', "expected '::='"),
        ('root ::= "a"\nroot ::= "b"', "defined twice"),
        ('root ::= root "a" | "b"', "left recursion"),
        ('root ::= x "a"\nx ::= "" | root', "left recursion"),
        ('root ::= ("a"?)*', "left recursion"),
    ],
)
def test_bad_grammars_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ConstraintError, match=re.escape(message)):
        compiled(text)


def test_right_recursion_and_deep_nesting_run_in_bounded_stack() -> None:
    assert compiled('root ::= "a" root | ""').accepts("a" * 20_000)
    nested = compiled('root ::= "(" root ")" | "x"')
    assert nested.accepts("(" * 3000 + "x" + ")" * 3000)
    assert not nested.accepts("(" * 3000 + "x" + ")" * 2999)


def test_an_ambiguous_grammar_is_refused_in_bounded_time() -> None:
    # after n a's, each of the 2**n ways to close them ("b" or "c" each) is a live stack
    ambiguous = compiled('root ::= "a" root "b" | "a" root "c" | ""')
    assert ambiguous.accepts("aabc") and not ambiguous.accepts("aab")
    started = time.monotonic()
    with pytest.raises(ConstraintError, match="too ambiguous"):
        ambiguous.accepts("a" * 40)
    assert time.monotonic() - started < 20
    assert MAX_STACKS >= 1000


def test_printing_escapes_what_parsers_read_differently() -> None:
    rules = {
        "root": Seq((Lit('a"b\\c\n\t\x00é中\U0001f600'), Chars(((45, 45), (94, 94), (93, 93)))))
    }
    text = gbnf.dump(rules)
    assert all(ord(c) < 127 for c in text)  # everything unusual is escaped
    assert r"\x2D" in text and r"\x5E" in text and r"\]" in text
    assert compiled(text).accepts('a"b\\c\n\t\x00é中\U0001f600-')
    assert gbnf.parse(text) == rules


def test_literal_and_one_of_quote_column_names_exactly() -> None:
    names = ["Year", 'col "A"', "a\\b", "x-y", "Größe", ""]
    grammar = compiled(gbnf.dump({"root": gbnf.one_of(names)}))
    assert all(grammar.accepts(n) for n in names)
    assert not grammar.accepts("year") and not grammar.accepts("col A")
    with pytest.raises(ConstraintError):
        gbnf.one_of([])


# -- regular expressions ---------------------------------------------------------------------

REGEX_CHARS = st.sampled_from(
    ["a", "b", "-", r"\.", r"\d", r"\w", r"\s", ".", "[ab]", "[^a]", "[a-c_]", r"[\d-]", "x"]
)


def _regexes() -> st.SearchStrategy[str]:
    return st.recursive(
        REGEX_CHARS,
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=3).map("".join),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + "|".join(xs) + ")"),
            st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{0,}", "*?"])).map(
                lambda t: f"(?:{t[0]}){t[1]}"
            ),
        ),
        max_leaves=6,
    )


REGEX_TEXT = st.text(alphabet="ab-.x1 _\n", max_size=8)
PYTHON_TEXT_CHARS = 14
"""Longest text compared with Python's ``re``: nested repetitions (``(?:(?:a*)*)*``) make its
backtracking matcher exponential in the length of a text that almost matches, so a longer
sample could hang the test (our recognizer is linear in it and needs no such bound)."""


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_regexes(), st.lists(REGEX_TEXT, max_size=6), st.integers(0, 2**32))
def test_a_regex_grammar_agrees_with_python(pattern, extra, seed) -> None:
    rules = {"root": read(pattern)}
    recognizer = compiled(gbnf.dump(rules))
    rng = random.Random(seed)
    samples = (grammar_oracle.sample(rules, rng) for _ in range(4))
    generated = [s for s in samples if s is not None and len(s) <= PYTHON_TEXT_CHARS]
    for text in generated + extra + [m for s in generated for m in _mutations(s, rng)]:
        python = re.fullmatch(pattern, text, flags=re.ASCII) is not None
        assert recognizer.accepts(text) == python, (pattern, text)
    for text in generated:
        assert re.fullmatch(pattern, text, flags=re.ASCII), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        (r"row \d+(, row \d+)*", ["row 1", "row 1, row 22"], ["row", "row 1,row 2"]),
        (r"^(?:yes|no)$", ["yes", "no"], ["yesno", "", "yes\n"]),
        (r"[^,\n]+\.", ["ab.", "é."], ["a,b.", ".", "a\n."]),
        (r"\x41\u00e9\t\\", ["Aé\t\\"], ["Ae\t\\"]),
        (r"a{2,3}", ["aa", "aaa"], ["a", "aaaa"]),
        (r"(a?)*b", ["b", "aab"], ["", "aa"]),
        (r"\S\W\D", ["a-x", "a a"], ["aaa", "a-1", " -x"]),
        (r"[\w.-]+@x", ["a.b-c@x"], ["@x", "a b@x"]),
        (r"a\$", ["a$"], ["a"]),
        (r"a\\$", ["a\\"], ["a\\$"]),
    ],
)
def test_regex_subset_cases(pattern: str, good: list[str], bad: list[str]) -> None:
    recognizer = compiled(gbnf.dump({"root": read(pattern)}))
    for text in good:
        assert recognizer.accepts(text) and re.fullmatch(pattern, text, re.ASCII), text
    for text in bad:
        assert not recognizer.accepts(text) and not re.fullmatch(pattern, text, re.ASCII), text


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        (r"(a)\1", r"the escape \1"),
        (r"(?=a)a", "a group with options"),
        (r"(?P<x>a)", "a group with options"),
        (r"(?i)a", "a group with options"),
        (r"\ba", r"the escape \b"),
        (r"a^b", "the anchor '^'"),
        (r"a$b", "the anchor '$'"),
        (r"a{", "a '{' that is not a count"),
        (r"a{x}", "a '{' that is not a count"),
        (r"a**", "a quantifier after a quantifier"),
        (r"a*+", "a quantifier after a quantifier"),
        (r"[]a]", "an unescaped ']'"),
        (r"[a", "an unterminated class"),
        (r"(a", "an unclosed group"),
        (r"a)", "an unmatched ')'"),
        (r"[\W]", r"\W inside a class"),
        (r"[b-a]", "a range"),
        (r"\01", "an octal escape"),
        ("a\\", "a trailing backslash"),
        (r"}", "where a character was expected"),
        (r"a{1001}", "a count outside 0 to 1000"),
    ],
)
def test_regexes_outside_the_subset_are_refused_by_name(pattern: str, named: str) -> None:
    with pytest.raises(ConstraintError, match=re.escape(named)):
        read(pattern)
