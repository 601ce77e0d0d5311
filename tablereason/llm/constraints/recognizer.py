"""A recognizer for GBNF grammars: does a text match, or could it still be continued to match?

The grammar is compiled the way llama.cpp runs it: every rule becomes alternatives of
flat element sequences (characters classes and rule references; groups and repetitions
become rules of their own), and matching keeps a set of pushdown stacks of positions,
advanced one character at a time. A reference in the last place of a sequence is not
pushed (a tail call), so right recursion (``list ::= item list | ""``) runs in constant
stack depth. Left recursion would never end, so a grammar with it is refused when
compiled, as llama.cpp refuses it.

Work is memoised (compiled grammars by text; the stacks a position expands to; the stacks
a stack and a character lead to) and bounded: more than :data:`MAX_STACKS` live stacks,
or more than :data:`MAX_STEPS` expansions in one check, raise
:class:`~tablereason.llm.errors.ConstraintError` instead of running on.

Example:
    >>> grammar = compiled('root ::= "f(" [0-9]+ ")"')
    >>> grammar.accepts("f(12)"), grammar.accepts("f(1"), grammar.viable("f(1")
    (True, False, True)
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field

from tablereason.llm.constraints.gbnf import Alt, Chars, Expr, Lit, Ref, Repeat, Rules, Seq, parse
from tablereason.llm.errors import ConstraintError

MAX_STACKS = 4096
"""Live stacks allowed after any character (an ambiguous grammar multiplies them)."""
MAX_STEPS = 2_000_000
"""Stack expansions allowed in one check."""
_MEMO_SIZE = 100_000

Stack = tuple[int, ...]
Element = Chars | int | None
"""A character class, a rule (its number), or the end of a sequence."""


@dataclass
class _Builder:
    elements: list[Element] = field(default_factory=list)
    alternatives: list[list[list[Element]]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)

    def rule(self, name: str) -> int:
        self.ids[name] = len(self.names)
        self.names.append(name)
        self.alternatives.append([])
        return self.ids[name]

    def sequence(self, expr: Expr, owner: str) -> list[Element]:
        if isinstance(expr, Lit):
            return [Chars(((ord(c), ord(c)),)) for c in expr.text]
        if isinstance(expr, Chars):
            return [expr]
        if isinstance(expr, Ref):
            return [self.ids[expr.name]]
        if isinstance(expr, Seq):
            return [e for item in expr.items for e in self.sequence(item, owner)]
        if isinstance(expr, Alt):
            rule = self.rule(f"{owner}/group{len(self.names)}")
            self.alternatives[rule] = [self.sequence(o, owner) for o in expr.options]
            return [rule]
        return self.repeat(expr, owner)

    def repeat(self, expr: Repeat, owner: str) -> list[Element]:
        item = self.sequence(expr.item, owner)
        out = item * expr.low
        if expr.high is None:
            star = self.rule(f"{owner}/repeat{len(self.names)}")
            self.alternatives[star] = [[*item, star], []]
            return [*out, star]
        tail: list[Element] = []
        for _ in range(expr.high - expr.low):
            optional = self.rule(f"{owner}/optional{len(self.names)}")
            self.alternatives[optional] = [[*item, *tail], []]
            tail = [optional]
        return out + tail


@dataclass(frozen=True)
class Program:
    """A compiled grammar: flat element sequences, the start of each rule's alternatives."""

    elements: tuple[Element, ...]
    starts: tuple[tuple[int, ...], ...]
    names: tuple[str, ...]
    start: int


def _nullable(alternatives: list[list[list[Element]]]) -> list[bool]:
    nullable = [False] * len(alternatives)
    changed = True
    while changed:
        changed = False
        for rule, options in enumerate(alternatives):
            if not nullable[rule] and any(
                all(isinstance(e, int) and nullable[e] for e in option) for option in options
            ):
                nullable[rule] = changed = True
    return nullable


def _refuse_left_recursion(alternatives: list[list[list[Element]]], names: list[str]) -> None:
    """Raise when a rule can reach itself without reading a character."""
    nullable = _nullable(alternatives)
    left: list[set[int]] = []
    for options in alternatives:
        firsts: set[int] = set()
        for option in options:
            for element in option:
                if not isinstance(element, int):
                    break
                firsts.add(element)
                if not nullable[element]:
                    break
        left.append(firsts)
    state = [0] * len(alternatives)  # 0 unseen, 1 on the path, 2 done

    def visit(rule: int, path: list[int]) -> None:
        state[rule] = 1
        for nxt in left[rule]:
            if state[nxt] == 1:
                cycle = [names[r] for r in path[path.index(nxt) :]] + [names[nxt]]
                raise ConstraintError(
                    "GBNF grammar: left recursion (a rule reaches itself before reading a "
                    f"character, or a repetition of something that may be empty): "
                    f"{' -> '.join(cycle)}"
                )
            if state[nxt] == 0:
                visit(nxt, [*path, nxt])
        state[rule] = 2

    for rule in range(len(alternatives)):
        if state[rule] == 0:
            visit(rule, [rule])


def compile_rules(rules: Rules) -> Program:
    """Compile a parsed grammar (see :func:`~tablereason.llm.constraints.gbnf.parse`).

    Raises:
        ConstraintError: The grammar is left-recursive.
    """
    builder = _Builder()
    for name in rules:
        builder.rule(name)
    for name, expr in rules.items():
        choices = expr.options if isinstance(expr, Alt) else (expr,)
        builder.alternatives[builder.ids[name]] = [builder.sequence(o, name) for o in choices]
    _refuse_left_recursion(builder.alternatives, builder.names)
    elements: list[Element] = []
    starts: list[tuple[int, ...]] = []
    for options in builder.alternatives:
        begin = []
        for option in options:
            begin.append(len(elements))
            elements.extend([*option, None])
        starts.append(tuple(begin))
    start = len(elements)
    elements.extend([builder.ids["root"], None])
    return Program(tuple(elements), tuple(starts), tuple(builder.names), start)


class Recognizer:
    """Matches texts against one compiled grammar (see the module notes).

    Args:
        program: The compiled grammar.
    """

    def __init__(self, program: Program) -> None:
        self.program = program
        self._positions: dict[int, frozenset[Stack]] = {}
        self._steps: dict[tuple[Stack, str], frozenset[Stack]] = {}
        self._local = threading.local()  # the steps left to the check this thread runs

    def _spend(self) -> None:
        self._local.budget = getattr(self._local, "budget", MAX_STEPS) - 1
        if self._local.budget < 0:
            raise ConstraintError(
                f"the grammar is too ambiguous to check (more than {MAX_STEPS} steps); "
                "make its alternatives start differently"
            )

    def _expand_position(self, pos: int) -> frozenset[Stack]:
        """What a stack whose top is ``pos`` becomes, until a character class is on top.

        ``()`` among the results: everything from ``pos`` on matched the empty text (the
        stack below continues).
        """
        known = self._positions.get(pos)
        if known is not None:
            return known
        elements = self.program.elements
        out: set[Stack] = set()
        element = elements[pos]
        if not isinstance(element, int):
            out.add((pos,))
        else:
            after: Stack = () if elements[pos + 1] is None else (pos + 1,)
            for begin in self.program.starts[element]:
                self._spend()
                inner = {()} if elements[begin] is None else self._expand_position(begin)
                for stack in inner:
                    if stack:
                        out.add(after + stack)
                    elif after:
                        out.update(self._expand_position(pos + 1))
                    else:
                        out.add(())
        result = frozenset(out)
        self._positions[pos] = result
        return result

    def _expand(self, stack: Stack) -> set[Stack]:
        """The stacks ``stack`` stands for, each with a character class on top (or empty)."""
        out: set[Stack] = set()
        pending, seen = [stack], {stack}
        while pending:
            current = pending.pop()
            if not current:
                out.add(())
                continue
            below = current[:-1]
            for top in self._expand_position(current[-1]):
                self._spend()
                if top:
                    out.add(below + top)
                elif below not in seen:  # the top matched nothing: the one below goes on
                    seen.add(below)
                    pending.append(below)
        return out

    def start(self) -> frozenset[Stack]:
        """The stacks before any character is read (and a fresh step budget)."""
        self._local.budget = MAX_STEPS
        return frozenset(self._expand((self.program.start,)))

    def feed(self, stacks: frozenset[Stack], char: str) -> frozenset[Stack]:
        """The stacks after reading ``char``; empty when the text cannot match any more."""
        out: set[Stack] = set()
        elements = self.program.elements
        for stack in stacks:
            key = (stack, char)
            known = self._steps.get(key)
            if known is None:
                known = frozenset()
                element = elements[stack[-1]] if stack else None
                if isinstance(element, Chars) and element.matches(char):
                    below, pos = stack[:-1], stack[-1]
                    moved = below if elements[pos + 1] is None else (*below, pos + 1)
                    known = frozenset(self._expand(moved))
                if len(self._steps) > _MEMO_SIZE:
                    self._steps.clear()
                self._steps[key] = known
            out.update(known)
        if len(out) > MAX_STACKS:
            raise ConstraintError(
                f"the grammar is too ambiguous to check (more than {MAX_STACKS} ways to read "
                "the text so far); make its alternatives start differently"
            )
        return frozenset(out)

    def _run(self, text: str) -> frozenset[Stack]:
        stacks = self.start()
        for char in text:
            stacks = self.feed(stacks, char)
            if not stacks:
                break
        return stacks

    def accepts(self, text: str) -> bool:
        """Whether the whole of ``text`` matches the grammar."""
        return () in self._run(text)

    def viable(self, text: str) -> bool:
        """Whether ``text`` matches the grammar or is the start of a text that does."""
        return bool(self._run(text))


@functools.lru_cache(maxsize=128)
def compiled(grammar: str) -> Recognizer:
    """The recognizer of a GBNF grammar text (memoised by text).

    Raises:
        ConstraintError: The grammar does not parse or is left-recursive.
    """
    return Recognizer(compile_rules(parse(grammar)))
