"""The Chain-of-Table steps as one table: :data:`STEP_TABLE`, and what derives from it.

Each :class:`StepDef` names a step, the :class:`~tablereason.table.Table` operation it
applies, the steps allowed after it, and, for each mode (``paper``, ``efficient``,
``large``; :mod:`~tablereason.methods.chain_of_table.modes`), the :class:`Way` the mode
runs it: the step function, its prompt, the reply's token limit and stop strings, and
the builder of the constraint its reply is sent with. The next-operation graph
(:data:`GRAPH`), the operation names the parsers read (:data:`OPERATION_NAMES`) and the
plan's constraint all come from this table; nothing else lists the steps.

A step is called as ``step(session, table, given)`` with the table so far and the
argument the generated chain gave it (or ``None``). It asks the model for the
operation's arguments (unless the chain's are usable), applies its acceptance rules
(skip, fall back) and, when they pass, the operation. It adds one trace step and
returns a :class:`~tablereason.methods.chain_of_table.state.StepResult`. Step functions
are named ``"module:function"`` and imported when first run, so this table imports
none of them.

Example:
    >>> OPERATION_NAMES
    ('add_column', 'select_row', 'select_column', 'group_column', 'sort_column')
    >>> GRAPH["group_column"]
    ('sort_column', '<END>')
    >>> STEPS.get("sort_column").ways["paper"].prompt
    'sort_column'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tablereason.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.methods.chain_of_table.state import ChainEntry

END = "<END>"
"""What a chain ends with."""
INIT = "<init>"
"""Where a chain starts, before its first operation."""
MODES = ("paper", "efficient", "large")
"""The modes every step has a way for."""
_PACKAGE = "tablereason.methods.chain_of_table"


@dataclass(frozen=True)
class Way:
    """How one mode runs one step.

    Attributes:
        run: The step function, as ``"module:function"`` in this package.
        prompt: The step's prompt template, within the mode's prompt folders
            (``None``: it asks nothing of its own).
        max_tokens: The reply's token limit (per call; a step that asks for a value
            per row adds ``per_row`` for each row asked).
        stop: The reply's stop strings.
        constraint: The builder of the reply's constraint, as ``"module:function"``
            (``None``: the reply is never constrained).
        per_row: Tokens added to ``max_tokens`` for each row a call asks about.
    """

    run: str
    prompt: str | None
    max_tokens: int
    stop: tuple[str, ...] = ()
    constraint: str | None = None
    per_row: int = 0

    @property
    def step(self) -> Callable[..., Any]:
        """The step function."""
        return resolve(self.run)

    @property
    def constraint_builder(self) -> Callable[..., Any] | None:
        """The constraint builder, or ``None``."""
        return None if self.constraint is None else resolve(self.constraint)


def resolve(target: str) -> Callable[..., Any]:
    """A ``"module:function"`` of this package, imported on first use.

    Example:
        >>> resolve("parse:parse_chain")(" f_select_row(row 1) -> <END>")
        ['select_row', '<END>']
    """
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(f"{_PACKAGE}.{module}"), name)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class StepDef:
    """One Chain-of-Table step.

    Attributes:
        name: The step's name, as chains write it (``f_<name>(...)``).
        operation: The table operation it applies (the large mode's select_row
            applies ``filter_rows`` instead).
        next: The steps allowed after it (``<END>`` included).
        ways: How each mode runs it.
    """

    name: str
    operation: str
    next: tuple[str, ...]
    ways: Mapping[str, Way] = field(default_factory=dict)


_SELECTION_STOP = ("])", "\n")

STEP_TABLE: tuple[StepDef, ...] = (
    StepDef(
        "add_column", "add_column",
        ("select_row", "select_column", "group_column", "sort_column", END),
        {
            "paper": Way("add_column:paper_add_column", "add_column", 150),
            "efficient": Way(
                "add_column:efficient_add_column", "add_column", 16, ("\n\n", "*/"),
                "grammars:add_column_rows", per_row=16,
            ),
            "large": Way(
                "large:add_column", "add_column", 48, ("\n",), "grammars:column_expression"
            ),
        },
    ),
    StepDef(
        "select_row", "select_rows", ("select_column", "group_column", "sort_column", END),
        {
            "paper": Way("select:paper_select_row", "select_row", 150, (), "grammars:paper_rows"),
            "efficient": Way(
                "select:efficient_select_row", "select_row", 60, _SELECTION_STOP, "grammars:rows"
            ),
            "large": Way("large:select_row", "select_row", 48, ("\n",), "grammars:condition"),
        },
    ),
    StepDef(
        "select_column", "select_columns", ("group_column", "sort_column", END),
        {
            "paper": Way(
                "select:paper_select_column", "select_column", 150, (), "grammars:paper_columns"
            ),
            "efficient": Way(
                "select:efficient_select_column", "select_column", 60, _SELECTION_STOP,
                "grammars:columns",
            ),
            "large": Way(
                "select:efficient_select_column", "select_column", 60, _SELECTION_STOP,
                "grammars:columns",
            ),
        },
    ),
    StepDef(
        "group_column", "group_by", ("sort_column", END),
        {
            "paper": Way(
                "group_sort:paper_group_column", "group_column", 150, (), "grammars:paper_group"
            ),
            "efficient": Way(
                "group_sort:efficient_group_column", "group_column", 24, ("\n",),
                "grammars:group",
            ),
            "large": Way(
                "group_sort:large_group_column", "group_column", 24, ("\n",), "grammars:group"
            ),
        },
    ),
    StepDef(
        "sort_column", "sort_by", (END,),
        {
            "paper": Way(
                "group_sort:paper_sort_column", "sort_column", 150, (), "grammars:paper_sort"
            ),
            "efficient": Way(
                "group_sort:efficient_sort_column", "sort_column", 24, ("\n",), "grammars:sort"
            ),
            "large": Way(
                "group_sort:large_sort_column", "sort_column", 24, ("\n",), "grammars:sort"
            ),
        },
    ),
)  # fmt: skip
"""Every step, in the order a chain may use them."""

STEPS: Registry[StepDef] = Registry("Chain-of-Table step")
for _definition in STEP_TABLE:
    STEPS.register(_definition.name, _definition)

OPERATION_NAMES: tuple[str, ...] = tuple(d.name for d in STEP_TABLE)
"""The operations a chain may name."""

GRAPH: dict[str, tuple[str, ...]] = {INIT: OPERATION_NAMES, **{d.name: d.next for d in STEP_TABLE}}
"""The steps allowed after each step (a DAG, so each operation runs at most once)."""


def allowed_after(last: str, skipped: Sequence[str] | set[str] = ()) -> list[str]:
    """The steps allowed after ``last``, minus the ``skipped`` ones.

    Example:
        >>> allowed_after("select_row", {"group_column"})
        ['select_column', 'sort_column', '<END>']
    """
    return [op for op in GRAPH[last] if op not in skipped]


def allowed_next(chain: Sequence[ChainEntry]) -> list[str]:
    """Operations allowed after the kept chain, minus every skipped operation.

    Example:
        >>> from tablereason.methods.chain_of_table.state import ChainEntry
        >>> chain = [ChainEntry("select_row", True, ""), ChainEntry("group_column", False, "")]
        >>> allowed_next(chain)
        ['select_column', 'sort_column', '<END>']
    """
    kept = [e.op for e in chain if e.kept]
    skipped = {e.op for e in chain if not e.kept}
    return allowed_after(kept[-1] if kept else INIT, skipped)
