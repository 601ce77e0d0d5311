"""The three ways a Chain-of-Table question runs: :data:`PAPER`, :data:`EFFICIENT`, :data:`LARGE`.

A :class:`Mode` is chosen once per question (:func:`mode_for`): the ``paper`` profile
runs as the published code does; the ``efficient`` profile on a table of at most
``large_table_rows`` rows runs the efficient mode, on a larger one the large-table mode.
The mode holds everything in which they differ that is not a setting: the prompt
folders, how the planner and the final query ask and read, the rules of the reference
that the efficient modes replace, and (through :data:`~.steps.STEP_TABLE`, by the mode's
name) the way each step runs. No step tests which mode it is in.

Example:
    >>> from tablereason.methods.chain_of_table.settings import PROFILES
    >>> from tablereason.table import Table
    >>> small = Table.from_records(["a"], [["1"]])
    >>> mode_for(PROFILES.get("efficient"), small).name, mode_for(PROFILES.get("paper"), small).name
    ('efficient', 'paper')
    >>> PAPER.plan.max_tokens, EFFICIENT.plan.max_tokens
    (200, 64)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tablereason.methods.chain_of_table.steps import Way

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.methods.chain_of_table.settings import ChainOfTableSettings
    from tablereason.table.value import Table


@dataclass(frozen=True)
class Mode:
    """What one mode does its own way.

    Attributes:
        name: ``"paper"``, ``"efficient"`` or ``"large"``; the key of its ways in
            :data:`~.steps.STEP_TABLE`.
        folders: The prompt folders under ``chain_of_table/``, searched in order.
        plan: The planning call: its prompt builder (``run``), token limit, stop and
            the plan's constraint.
        plan_constrained_tokens: The planning call's token limit when its reply is
            constrained (a constrained chain carries every argument in full).
        final: The final query of each task (``tabfact``, ``wikitq``): its function,
            token limit, stop and the answer's constraint.
        chat: Ask with the reference's system message and one user message.
        chain_arguments: The arguments a generated chain gives may be applied (also
            needs ``settings.plan_arguments``).
        always_sample: Row and column selection sample ``select_samples`` replies
            and vote even when that is 1 (the reference).
        note_first_rows: The input step says that prompts show only the first
            ``view_rows`` rows of a longer table (the reference's view).
    """

    name: str
    folders: tuple[str, ...]
    plan: Way
    plan_constrained_tokens: int
    final: dict[str, Way]
    chat: bool
    chain_arguments: bool
    always_sample: bool
    note_first_rows: bool


PAPER = Mode(
    name="paper",
    folders=("paper", "shared"),
    plan=Way("planner:paper_prompt", "plan", 200, ("\n\n",), "grammars:paper_plan"),
    plan_constrained_tokens=200,
    final={
        "tabfact": Way("answer:paper_final", "final_tabfact", 200, (), "grammars:paper_verdict"),
        "wikitq": Way("answer:paper_final", "final_wikitq", 200, (), "grammars:answers"),
    },
    chat=True,
    chain_arguments=False,
    always_sample=True,
    note_first_rows=True,
)
"""The reference's way (``profile="paper"``)."""

EFFICIENT = Mode(
    name="efficient",
    folders=("efficient", "shared"),
    plan=Way("planner:efficient_prompt", "plan", 64, ("\n",), "grammars:plan"),
    plan_constrained_tokens=128,
    final={
        "tabfact": Way("answer:efficient_final", "final_tabfact", 8, ("\n",), "grammars:verdict"),
        "wikitq": Way("answer:efficient_final", "final_wikitq", 48, ("\n",), "grammars:answers"),
    },
    chat=False,
    chain_arguments=True,
    always_sample=False,
    note_first_rows=False,
)
"""The efficient profile on a table of at most ``large_table_rows`` rows."""

LARGE = replace(
    EFFICIENT,
    name="large",
    folders=("large", "efficient", "shared"),
    plan=Way("planner:large_prompt", "plan", 64, ("\n",), "grammars:large_plan"),
    plan_constrained_tokens=160,
    final={
        "tabfact": Way("answer:large_final", "final_tabfact", 8, ("\n",), "grammars:verdict"),
        "wikitq": Way("answer:large_final", "final_wikitq", 48, ("\n",), "grammars:answers"),
    },
)
"""The efficient profile on a table of more than ``large_table_rows`` rows."""

MODES = {mode.name: mode for mode in (PAPER, EFFICIENT, LARGE)}


def is_large(table: Table, threshold: int | None) -> bool:
    """Whether a run on ``table`` uses the large-table mode (more than ``threshold`` rows).

    Example:
        >>> from tablereason.table import Table
        >>> is_large(Table.from_records(["a"], [["1"]] * 5), 4), is_large(
        ...     Table.from_records(["a"], [["1"]] * 5), None)
        (True, False)
    """
    return threshold is not None and table.num_rows > threshold


def mode_for(settings: ChainOfTableSettings, table: Table) -> Mode:
    """The mode a question on ``table`` runs in: large past the switch, else by profile."""
    if is_large(table, settings.large_table_rows):
        return LARGE
    return PAPER if settings.profile == "paper" else EFFICIENT
