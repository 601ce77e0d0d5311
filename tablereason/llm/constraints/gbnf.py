r"""GBNF, llama.cpp's grammar format: its syntax tree, a parser, a printer and builders.

A grammar is a set of rules ``name ::= alternatives``, ``root`` first to match. An
alternative is a sequence of ``"literals"``, character classes (``[a-z]``, ``[^\n]``),
``.`` (any character), rule names and ``( groups )``, each optionally followed by ``*``,
``+``, ``?`` or ``{m}``, ``{m,}``, ``{m,n}``. ``#`` starts a comment; a rule ends at the end
of its line, unless inside parentheses or after a ``|``.

The printer writes what every consumer we send grammars to reads (llama.cpp, llama-cpp-
python and vLLM's xgrammar): repetition counts are spelled out, and every character
outside printable ASCII (and the few that are special) is escaped.

Example:
    >>> grammar = parse('root ::= "yes" | "no"')
    >>> print(dump(grammar))
    root ::= "yes" | "no"
    >>> print(dump({"root": one_of(["a-b", 'say "hi"'])}))
    root ::= "a-b" | "say \"hi\""
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tablereason.llm.errors import ConstraintError

MAX_REPEAT = 1000
"""Largest repetition count a grammar may spell (``x{0,1000}``)."""


@dataclass(frozen=True)
class Lit:
    """A literal string (empty: the empty sequence)."""

    text: str


@dataclass(frozen=True)
class Chars:
    """One character from ``ranges`` (inclusive code point pairs), or not, when negated."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False

    def matches(self, char: str) -> bool:
        r"""Whether ``char`` is in the class.

        Example:
            >>> Chars(((97, 122),)).matches("q"), Chars(((10, 10),), negated=True).matches("\n")
            (True, False)
        """
        code = ord(char)
        inside = any(lo <= code <= hi for lo, hi in self.ranges)
        return inside != self.negated


ANY = Chars((), negated=True)
"""Any one character (``.`` in GBNF)."""


@dataclass(frozen=True)
class Ref:
    """A reference to the rule ``name``."""

    name: str


@dataclass(frozen=True)
class Seq:
    """Items one after another."""

    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Alt:
    """One of ``options``."""

    options: tuple[Expr, ...]


@dataclass(frozen=True)
class Repeat:
    """``item`` repeated ``low`` to ``high`` times (``None``: no upper bound)."""

    item: Expr
    low: int
    high: int | None


Expr = Lit | Chars | Ref | Seq | Alt | Repeat
Rules = dict[str, Expr]
"""A grammar: rule name -> expression; ``"root"`` is where matching starts."""

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_REPEAT = re.compile(r"\{\s*(\d*)\s*(,?)\s*(\d*)\s*\}")
_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "[": "[", "]": "]"}
_HEX = {"x": 2, "u": 4, "U": 8}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> ConstraintError:
        line = self.text.count("\n", 0, self.pos) + 1
        around = self.text[self.pos : self.pos + 20]
        return ConstraintError(f"GBNF grammar, line {line}: {what} at {around!r}")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def space(self, newlines: bool) -> None:
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in " \t" or (newlines and char in "\r\n"):
                self.pos += 1
            elif char == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else (end if not newlines else end + 1)
            else:
                return

    def name(self) -> str:
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise self.fail("expected a rule name")
        self.pos = match.end()
        return match.group()

    def char(self, stop: str) -> int:
        """One (possibly escaped) character of a literal or class; its code point."""
        if self.pos >= len(self.text):
            raise self.fail(f"unterminated {'literal' if stop == chr(34) else 'class'}")
        char = self.text[self.pos]
        if char != "\\":
            self.pos += 1
            return ord(char)
        code = self.text[self.pos + 1 : self.pos + 2]
        if code in _HEX:
            digits = self.text[self.pos + 2 : self.pos + 2 + _HEX[code]]
            if len(digits) != _HEX[code] or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise self.fail(f"\\{code} needs {_HEX[code]} hex digits")
            self.pos += 2 + _HEX[code]
            value = int(digits, 16)
            if value > 0x10FFFF:
                raise self.fail("escape beyond the last Unicode code point")
            return value
        if code not in _ESCAPES:
            raise self.fail(f"unknown escape \\{code}")
        self.pos += 2
        return ord(_ESCAPES[code])

    def literal(self) -> Lit:
        self.pos += 1  # the opening quote
        out = []
        while self.peek() != '"':
            out.append(chr(self.char('"')))
        self.pos += 1
        return Lit("".join(out))

    def chars(self) -> Chars:
        self.pos += 1  # [
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges = []
        while self.peek() != "]":
            low = self.char("]")
            high = low
            if self.peek() == "-" and self.text[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                high = self.char("]")
                if high < low:
                    raise self.fail("a range that ends before it starts")
            ranges.append((low, high))
        self.pos += 1
        return Chars(tuple(ranges), negated)

    def atom(self, nested: bool) -> Expr | None:
        char = self.peek()
        if char == '"':
            return self.literal()
        if char == "[":
            return self.chars()
        if char == ".":
            self.pos += 1
            return ANY
        if char == "(":
            self.pos += 1
            self.space(True)
            inner = self.alternatives(nested=True)
            if self.peek() != ")":
                raise self.fail("expected ')'")
            self.pos += 1
            return inner
        if char and _NAME.match(char):
            return Ref(self.name())
        return None

    def postfix(self, item: Expr) -> Expr:
        char = self.peek()
        if char in ("*", "+", "?"):
            self.pos += 1
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
            return Repeat(item, low, high)
        if char == "{":
            match = _REPEAT.match(self.text, self.pos)
            if match is None:
                raise self.fail("expected a repetition such as {2}, {1,} or {0,3}")
            low_text, comma, high_text = match.groups()
            low = int(low_text or 0)
            high = (None if not high_text else int(high_text)) if comma else low
            if (high is not None and high < low) or max(low, high or 0) > MAX_REPEAT:
                raise self.fail(f"a repetition count outside 0 to {MAX_REPEAT} or reversed")
            self.pos = match.end()
            return Repeat(item, low, high)
        return item

    def sequence(self, nested: bool) -> Expr:
        items: list[Expr] = []
        while True:
            self.space(nested)
            atom = self.atom(nested)
            if atom is None:
                break
            items.append(self.postfix(atom))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def alternatives(self, nested: bool) -> Expr:
        options = [self.sequence(nested)]
        while self.peek() == "|":
            self.pos += 1
            self.space(True)
            options.append(self.sequence(nested))
        self.space(nested)
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def rules(self) -> Rules:
        rules: Rules = {}
        self.space(True)
        while self.pos < len(self.text):
            name = self.name()
            self.space(False)
            if not self.text.startswith("::=", self.pos):
                raise self.fail("expected '::='")
            self.pos += 3
            self.space(True)
            if name in rules:
                raise self.fail(f"rule {name!r} defined twice")
            rules[name] = self.alternatives(nested=False)
            if self.peek() not in ("\n", "\r", ""):
                raise self.fail("unexpected text")
            self.space(True)
        return rules


def parse(text: str) -> Rules:
    """Read a GBNF grammar.

    Raises:
        ConstraintError: It does not parse, has no ``root`` rule, or uses a rule it
            does not define.

    Example:
        >>> parse('root ::= [0-9]+ ("." [0-9]+)?')["root"].items[0]
        Repeat(item=Chars(ranges=((48, 57),), negated=False), low=1, high=None)
    """
    rules = _Parser(text).rules()
    check(rules)
    return rules


def references(expr: Expr) -> set[str]:
    """Names of the rules ``expr`` refers to."""
    if isinstance(expr, Ref):
        return {expr.name}
    if isinstance(expr, (Seq, Alt)):
        parts = expr.items if isinstance(expr, Seq) else expr.options
        return set().union(*(references(p) for p in parts)) if parts else set()
    if isinstance(expr, Repeat):
        return references(expr.item)
    return set()


def check(rules: Rules) -> None:
    """Refuse a grammar without ``root`` or with a reference to a rule it lacks."""
    if "root" not in rules:
        raise ConstraintError("GBNF grammar: no 'root' rule (matching starts there)")
    for name, expr in rules.items():
        missing = sorted(references(expr) - set(rules))
        if missing:
            raise ConstraintError(f"GBNF grammar: rule {name!r} uses undefined rule {missing[0]!r}")


# -- printing -----------------------------------------------------------------------------

_PLAIN = {chr(c) for c in range(0x20, 0x7F)} - {'"', "\\", "[", "]"}


def _escape(code: int, in_class: bool) -> str:
    char = chr(code)
    if char in _PLAIN and not (in_class and char in "^-"):
        return char
    if char in "\n\t\r":
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}[char]
    if char in '"\\[]':
        return "\\" + char
    if code < 0x100:
        return f"\\x{code:02X}"
    if code < 0x10000:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


def literal(text: str) -> str:
    r"""``text`` as a GBNF literal, escaped as needed.

    Example:
        >>> print(literal('col "A"\n'))
        "col \"A\"\n"
    """
    return '"' + "".join(_escape(ord(c), False) for c in text) + '"'


def one_of(options: list[str] | tuple[str, ...]) -> Expr:
    """An expression matching exactly one of ``options`` (at least one).

    The options are factored by their common beginnings (a trie), so a grammar sampler
    follows one path per distinct next character rather than one per option: with 600
    column names that share a few first letters, a few live paths instead of 600.

    Example:
        >>> print(dump({"root": one_of(("yes", "no"))}))
        root ::= "yes" | "no"
        >>> print(dump({"root": one_of(("Year", "Year 2", "Team"))}))
        root ::= "Year" ("" | " 2") | "Team"
    """
    if not options:
        raise ConstraintError("a choice needs at least one option")
    return _trie(list(dict.fromkeys(options)))


def _trie(options: list[str]) -> Expr:
    """``options`` (distinct) as nested alternatives sharing their common prefixes."""
    if len(options) == 1:
        return Lit(options[0])
    common = options[0]
    for option in options[1:]:
        while not option.startswith(common):
            common = common[:-1]
    if common:
        rest = _trie([o[len(common) :] for o in options])
        return Seq((Lit(common), rest))
    branches: dict[str, list[str]] = {}
    for option in options:
        branches.setdefault(option[:1], []).append(option[1:])
    alternatives = [
        _trie([first + r for r in rests]) if first else Lit("") for first, rests in branches.items()
    ]
    return Alt(tuple(alternatives))


def _class(chars: Chars) -> str:
    if chars == ANY:
        return "."
    body = "".join(
        _escape(lo, True) if lo == hi else f"{_escape(lo, True)}-{_escape(hi, True)}"
        for lo, hi in chars.ranges
    )
    if not body and not chars.negated:
        raise ConstraintError("GBNF has no way to write a class that matches nothing")
    return f"[{'^' if chars.negated else ''}{body}]"


def _repeat(item: str, low: int, high: int | None) -> str:
    """``item`` repeated, with counts spelled out (older parsers lack ``{m,n}``)."""
    parts = [item] * low
    if high is None:
        parts.append(f"{item}*")
    elif high > low:
        tail = f"{item}?"
        for _ in range(high - low - 1):
            tail = f"({item} {tail})?"
        parts.append(tail)
    return " ".join(parts) if parts else '""'


def expression(expr: Expr, top: bool = True) -> str:
    """GBNF text of one expression (parenthesised where an operator needs it)."""
    if isinstance(expr, Lit):
        return literal(expr.text)
    if isinstance(expr, Chars):
        return _class(expr)
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Seq):
        if not expr.items:
            return '""'
        text = " ".join(expression(i, top=False) for i in expr.items)
        return text if top or len(expr.items) == 1 else f"({text})"
    if isinstance(expr, Alt):
        text = " | ".join(expression(o) for o in expr.options)
        return text if top else f"({text})"
    item = expression(expr.item)
    single = isinstance(expr.item, Lit) and len(expr.item.text) == 1
    if not (single or isinstance(expr.item, (Chars, Ref))):
        item = f"({item})"
    return _repeat(item, expr.low, expr.high)


def dump(rules: Rules) -> str:
    """GBNF text of a grammar, ``root`` first."""
    check(rules)
    order = ["root", *sorted(n for n in rules if n != "root")]
    return "\n".join(f"{name} ::= {expression(rules[name])}" for name in order)


def renamed(rules: Rules, prefix: str) -> Rules:
    """The grammar with every rule name prefixed (to merge it into another one)."""

    def walk(expr: Expr) -> Expr:
        if isinstance(expr, Ref):
            return Ref(prefix + expr.name)
        if isinstance(expr, Seq):
            return Seq(tuple(walk(i) for i in expr.items))
        if isinstance(expr, Alt):
            return Alt(tuple(walk(o) for o in expr.options))
        if isinstance(expr, Repeat):
            return Repeat(walk(expr.item), expr.low, expr.high)
        return expr

    return {prefix + name: walk(expr) for name, expr in rules.items()}
