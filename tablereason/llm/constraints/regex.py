r"""Regular expressions, in the subset we can send as a grammar, read into GBNF expressions.

The subset, in Python's syntax, matched against the whole text (as :func:`re.fullmatch`
with :data:`re.ASCII`):

* characters, and escaped ones: ``\.``, ``\\``, ``\n``, ``\t``, ``\r``, ``\f``, ``\v``,
  ``\xHH``, ``\uHHHH`` and any escaped punctuation;
* ``.`` (any character but a newline), ``\d``, ``\w``, ``\s`` and ``\D``, ``\W``, ``\S``
  (ASCII meanings), classes ``[a-z_]`` and ``[^,\n]`` (with ``\d``, ``\w``, ``\s`` inside);
* groups ``( )`` and ``(?: )``, alternation ``|``;
* ``*``, ``+``, ``?``, ``{m}``, ``{m,}``, ``{m,n}`` (lazy forms such as ``*?`` match the
  same texts and are accepted), counts up to
  :data:`~tablereason.llm.constraints.gbnf.MAX_REPEAT`;
* ``^`` at the very start and ``$`` at the very end (the match is whole anyway).

Anything else (backreferences, lookaround, named groups, flags, possessive quantifiers,
``\b``, anchors inside the pattern, an unescaped ``{`` or ``]`` that is not syntax) is refused
with :class:`~tablereason.llm.errors.ConstraintError` naming it, rather than sent and
read differently by a server.

Example:
    >>> from tablereason.llm.constraints.gbnf import dump
    >>> print(dump({"root": read(r"row \d+(, row \d+)*")}))
    root ::= "row " [0-9] [0-9]* (", row " [0-9] [0-9]*)*
"""

from __future__ import annotations

from tablereason.llm.constraints.gbnf import (
    MAX_REPEAT,
    Alt,
    Chars,
    Expr,
    Lit,
    Ref,
    Repeat,
    Seq,
)
from tablereason.llm.errors import ConstraintError

_DIGIT = ((48, 57),)
_WORD = ((48, 57), (65, 90), (95, 95), (97, 122))
_SPACE = ((9, 13), (32, 32))
_CLASSES = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_CONTROLS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "0": "\0"}
_META = set(".^$*+?{}[]\\|()")
_NEWLINE_FREE = Chars(((10, 10),), negated=True)


class _Reader:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.pos = 0

    def fail(self, what: str) -> ConstraintError:
        return ConstraintError(
            f"regular expression {self.pattern!r}, position {self.pos}: {what} "
            "(supported: literals, escapes, . \\d \\w \\s, classes, groups, |, * + ? {m,n})"
        )

    def peek(self, ahead: int = 0) -> str:
        at = self.pos + ahead
        return self.pattern[at] if at < len(self.pattern) else ""

    def hex_escape(self, letter: str) -> int:
        size = 2 if letter == "x" else 4
        digits = self.pattern[self.pos : self.pos + size]
        if len(digits) != size or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise self.fail(f"\\{letter} needs {size} hex digits")
        self.pos += size
        return int(digits, 16)

    def escape(self, in_class: bool) -> Chars | int:
        r"""After a backslash: a class (``\d``...) or one character's code point."""
        letter = self.peek()
        if not letter:
            raise self.fail("a trailing backslash")
        self.pos += 1
        if letter.lower() in _CLASSES:
            ranges = _CLASSES[letter.lower()]
            if letter.isupper():
                if in_class:
                    raise self.fail(f"\\{letter} inside a class")
                return Chars(ranges, negated=True)
            return Chars(ranges)
        if letter in _CONTROLS:
            if letter == "0" and self.peek().isdigit():
                raise self.fail("an octal escape")
            return ord(_CONTROLS[letter])
        if letter in "xu":
            return self.hex_escape(letter)
        if letter.isalnum():
            raise self.fail(f"the escape \\{letter}")
        return ord(letter)

    def char_class(self) -> Chars:
        self.pos += 1  # [
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            char = self.peek()
            if not char:
                raise self.fail("an unterminated class")
            if char == "]" and not first:
                self.pos += 1
                break
            if char == "]" or char == "[":
                raise self.fail(f"an unescaped {char!r} in a class (write \\{char})")
            first = False
            self.pos += 1
            low: Chars | int = self.escape(True) if char == "\\" else ord(char)
            if isinstance(low, Chars):
                ranges.extend(low.ranges)
                continue
            high = low
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                end = self.peek()
                self.pos += 1
                bound = self.escape(True) if end == "\\" else ord(end)
                if isinstance(bound, Chars) or bound < low:
                    raise self.fail("a range that is not from one character to a later one")
                high = bound
            ranges.append((low, high))
        return Chars(tuple(ranges), negated)

    def atom(self) -> Expr | None:
        char = self.peek()
        if not char or char in "|)":
            return None
        if char == "(":
            self.pos += 1
            if self.peek() == "?":
                if self.peek(1) != ":":
                    raise self.fail("a group with options ((?=, (?P<, (?i)...)")
                self.pos += 2
            inner = self.alternatives()
            if self.peek() != ")":
                raise self.fail("an unclosed group")
            self.pos += 1
            return inner
        if char == "[":
            return self.char_class()
        if char == ".":
            self.pos += 1
            return _NEWLINE_FREE
        if char == "\\":
            self.pos += 1
            escaped = self.escape(False)
            return escaped if isinstance(escaped, Chars) else Lit(chr(escaped))
        if char in "^$":
            raise self.fail(f"the anchor {char!r} inside the pattern")
        if char in _META:
            raise self.fail(f"{char!r} where a character was expected (write \\{char})")
        self.pos += 1
        return Lit(char)

    def count(self) -> tuple[int, int | None]:
        end = self.pattern.find("}", self.pos)
        body = self.pattern[self.pos + 1 : end] if end > 0 else ""
        low_text, comma, high_text = body.partition(",")
        if end < 0 or not low_text.isdigit() or (high_text and not high_text.isdigit()):
            raise self.fail("a '{' that is not a count {m}, {m,} or {m,n} (write \\{)")
        low = int(low_text)
        high = (int(high_text) if high_text else None) if comma else low
        if (high is not None and high < low) or max(low, high or 0) > MAX_REPEAT:
            raise self.fail(f"a count outside 0 to {MAX_REPEAT} or reversed")
        self.pos = end + 1
        return low, high

    def quantified(self, item: Expr) -> Expr:
        char = self.peek()
        if char in ("*", "+", "?"):
            self.pos += 1
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        elif char == "{":
            low, high = self.count()
        else:
            return item
        if self.peek() == "?":  # lazy: the same texts match
            self.pos += 1
        if self.peek() in ("*", "+", "?", "{"):
            raise self.fail("a quantifier after a quantifier (possessive or repeated)")
        return repeat(item, low, high)

    def sequence(self) -> Expr:
        items: list[Expr] = []
        while (atom := self.atom()) is not None:
            item = self.quantified(atom)
            if isinstance(item, Lit) and items and isinstance(items[-1], Lit):
                items[-1] = Lit(items[-1].text + item.text)  # "ab", not "a" "b"
            else:
                items.append(item)
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def alternatives(self) -> Expr:
        options = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Alt(tuple(options))


def nullable(expr: Expr) -> bool:
    """Whether ``expr`` matches the empty text."""
    if isinstance(expr, Lit):
        return not expr.text
    if isinstance(expr, Seq):
        return all(nullable(i) for i in expr.items)
    if isinstance(expr, Alt):
        return any(nullable(o) for o in expr.options)
    if isinstance(expr, Repeat):
        return expr.low == 0 or nullable(expr.item)
    if isinstance(expr, Ref):  # pragma: no cover - regular expressions have no rules
        raise ConstraintError("a rule reference in a regular expression")
    return False


def non_empty(expr: Expr) -> Expr | None:
    """``expr`` without the empty text (None when it matches nothing else).

    A repetition of something that may be empty would be left-recursive as a grammar;
    ``(x)*`` matches what ``(x without the empty text)*`` matches, so that is sent.
    """
    if not nullable(expr):
        return expr
    if isinstance(expr, Lit):
        return None
    if isinstance(expr, Alt):
        kept = [o for o in (non_empty(o) for o in expr.options) if o is not None]
        return None if not kept else kept[0] if len(kept) == 1 else Alt(tuple(kept))
    if isinstance(expr, Repeat):
        item = non_empty(expr.item)
        if item is None or expr.high == 0:
            return None
        more = Repeat(expr.item, 0, None if expr.high is None else expr.high - 1)
        return Seq((item, more))
    assert isinstance(expr, Seq)  # every item may be empty
    first, rest = expr.items[0], Seq(expr.items[1:])
    options: list[Expr] = []
    head = non_empty(first)
    if head is not None:
        options.append(Seq((head, rest)))
    tail = non_empty(rest) if rest.items else None
    if tail is not None:
        options.append(tail)
    return None if not options else options[0] if len(options) == 1 else Alt(tuple(options))


def repeat(item: Expr, low: int, high: int | None) -> Expr:
    """``item`` repeated ``low`` to ``high`` times, as a grammar can say it."""
    if not nullable(item):
        return Repeat(item, low, high)
    body = non_empty(item)
    if body is None or high == 0:
        return Lit("")
    return Repeat(body, 0, high)  # the empty copies account for the low count


def unanchored(pattern: str) -> str:
    r"""``pattern`` without a ``^`` at its start and a ``$`` at its end (the match is whole).

    Example:
        >>> unanchored("^(yes|no)$"), unanchored(r"a\$")
        ('(yes|no)', 'a\\$')
    """
    if pattern.startswith("^"):
        pattern = pattern[1:]
    backslashes = len(pattern[:-1]) - len(pattern[:-1].rstrip("\\"))
    if pattern.endswith("$") and backslashes % 2 == 0:
        pattern = pattern[:-1]
    return pattern


def read(pattern: str) -> Expr:
    """The GBNF expression of a regular expression in the supported subset.

    Raises:
        ConstraintError: For anything outside the subset (see the module notes).

    Example:
        >>> read("yes|no")
        Alt(options=(Lit(text='yes'), Lit(text='no')))
    """
    reader = _Reader(unanchored(pattern))
    expr = reader.alternatives()
    if reader.pos < len(reader.pattern):
        raise reader.fail(f"an unmatched {reader.peek()!r}")
    return expr
