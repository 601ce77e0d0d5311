r"""Grammars of the tool-using methods' decisions, Chameleon's plans and a program's code.

- :func:`rewoo_plan`: ``Plan:`` lines each followed by ``#E<n> = Tool[input]``, the
  variables numbered in order, the tools those the method has, at most a bound of steps;
- :func:`react_action`: after ``<watchword>: ``, a known tool (or the finishing one) and
  its bracketed input; the Thought before it is free;
- :func:`module_list`: a JSON list of module names from the inventory;
- :func:`program_block`: one Python code block that sets ``ans`` (no fence inside).

Example:
    >>> from tablereason.llm.constraints import satisfies
    >>> plan = rewoo_plan(["Wikipedia", "LLM"], steps=2)
    >>> satisfies(plan, " Find it.\n#E1 = Wikipedia[Oslo]\nPlan: Ask.\n#E2 = LLM[Where? #E1]")
    True
    >>> satisfies(plan, " Find it.\n#E1 = Google[Oslo]")
    False
    >>> satisfies(react_action(["Search"], "Action", "Finish"), "I know.\nAction: Finish[yes]")
    True
"""

from __future__ import annotations

from collections.abc import Sequence

from tablereason.llm.constraints import Grammar
from tablereason.llm.constraints.gbnf import Chars, Ref, Repeat
from tablereason.methods.constraints.parts import (
    Expr,
    Rules,
    grammar,
    listed,
    one_of,
    optional,
    seq,
    text_of,
)

PLAN_CHARS = 200
"""Longest ``Plan:`` line."""
INPUT_CHARS = 200
"""Longest tool input."""


def _call(tools: Sequence[str]) -> Expr:
    """``Tool[input]``: a known tool and an input on one line, up to its last ``]``."""
    return seq(one_of(list(tools)), "[", text_of("\n", least=0, most=INPUT_CHARS), "]")


def rewoo_plan(tools: Sequence[str], *, steps: int) -> Grammar:
    """A ReWOO plan continuing ``Plan:``: up to ``steps`` plan and evidence line pairs.

    Args:
        tools: The names of the method's tools.
        steps: Most evidence steps (the plan's bound).
    """
    text = seq(" ", text_of("\n", most=PLAN_CHARS))
    rules: Rules = {}
    for n in range(steps, 0, -1):  # step n writes #E<n>, then maybe step n + 1
        line = seq(text, f"\n#E{n} = ", _call(tools))
        more = seq("\nPlan:", Ref(f"step-{n + 1}"))
        rules[f"step-{n}"] = seq(line, optional(more)) if n < steps else line
    rules["root"] = seq(Ref("step-1"), optional("\n"))
    return grammar(rules)


def react_action(tools: Sequence[str], watchword: str, finish: str) -> Grammar:
    """A ReAct step: free thought, then ``<watchword>: `` and a tool call (or ``finish``)."""
    return grammar({"root": _call([*tools, finish])}, after=f"{watchword}: ")


def module_list(modules: Sequence[str]) -> Grammar:
    """A Chameleon plan continuing ``Modules:``: a JSON list of module names."""
    name = seq('"', one_of(list(modules)), '"')
    return grammar({"root": seq(" [", listed(name, ", ", most=len(modules)), "]", optional("\n"))})


def program_block() -> Grammar:
    """The code of one Python block (no fence inside) with a line that assigns ``ans``."""
    line = seq(text_of("`\n", least=0, most=None), "\n")
    answer = seq("ans = ", Chars(((96, 96), (10, 10)), negated=True))
    code = text_of("`", least=0, most=None)
    return grammar({"root": seq(Repeat(line, 0, None), answer, code)})
