"""Chain-of-Table settings and the two named profiles, ``paper`` and ``efficient``.

``paper`` reproduces the published code's behaviour (google-research/chain-of-table;
docs/chain_of_table.md describes it); ``efficient`` is the same method with the
reference's bugs fixed and its costs cut. The differences that are whole ways of doing
a step rather than knobs are the modes of
:mod:`~tablereason.methods.chain_of_table.modes`; docs/chain_of_table.md lists every
difference.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from tablereason.calls.sampling import SamplingSettings
from tablereason.registry import Registry


class ChainOfTableSettings(SamplingSettings):
    """Every knob of a Chain-of-Table run.

    Attributes:
        profile: Which prompt family and rule set to use: ``"paper"`` or ``"efficient"``.
        select_samples: Completions sampled for row and column selection.
        select_temperature: Sampling temperature for row and column selection.
        select_union: How many top-voted selections are united.
        add_column_per_row: Reference behaviour: 3 values from a first call, then one
            call per further row. Otherwise all rows in one call per chunk.
        add_column_chunk_rows: Rows per add-column call when not per row.
        sort_numerical_only: Apply a sort only when the model calls the column Numerical.
        group_threshold: A column is grouped only when distinct / non-empty values is at
            most this.
        view_rows: Most rows a prompt shows (operations still run over every row).
        sample_view: Choose the shown rows around what the question mentions (else the
            first ``view_rows`` rows, as the reference does).
        repairs: Re-asks allowed when a reply cannot be parsed (0 = reference).
        reuse_plan: Follow the rest of a generated chain instead of asking the planner
            again at every step.
        plan_arguments: Apply the arguments a generated chain already gives when they
            parse and name rows or columns of the table (select_row, select_column,
            group_column; sort_column only when the chain also names the order),
            instead of asking for them again; add_column's ``name = expression`` is
            computed for every row with no call (a bare name asks for the values).
        ask_when_plan_unusable: With ``plan_arguments``, what happens when the chain
            gives an operation an argument that names nothing usable (a column the
            table lacks, rows out of range): ask the operation's own prompt (``True``),
            or apply the reference's fallback for an unusable reply without a call
            (``False``): all rows, all columns, or skip the group or sort. A sort whose
            chain argument names a known column but no order still asks for the order.
        replan_after_chain: With ``reuse_plan``, ask the planner again when the
            generated chain is used up without ``<END>`` (``True``), or end the chain
            there (``False``): the generated chain is the whole plan.
        chat_messages: Send the reference's system message plus one user message instead
            of one raw prompt.
        lowercase_wikitq: Lower-case WikiTQ tables and questions (the reference's
            rules assume lower-case text, as TabFact has).
        mask_digits: Replace digit runs with ``_`` in the add-column question (reference).
        temperature: Sampling temperature of every request (``None``: each call's own,
            ``select_temperature`` for the selections and 0 elsewhere); a composed method
            sets it to sample whole chains (see docs/strategies.md).
        top_p: Nucleus sampling bound of every request.
        seed: Seed sent with sampled requests, so runs replay exactly.
        constrain: Send each reply's constraint (built from the table and the chain so
            far: the operations the graph allows, column names, row numbers, SQL over
            the table's columns, the answer's form) to models that enforce it; others
            are asked as without. The paper profile asks as the reference does, so it
            sends none unless this is set.
        large_table_rows: Input tables with more rows than this run in the
            large-table mode (a bounded view computed in DuckDB, conditions and
            expressions over every row; see
            :mod:`~tablereason.methods.chain_of_table.large`); ``None`` never switches
            (the paper profile: the first ``view_rows`` rows, as the reference shows).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Literal["paper", "efficient"] = "efficient"
    select_samples: int = Field(default=1, ge=1)
    select_temperature: float = Field(default=0.0, ge=0.0)
    select_union: int = Field(default=1, ge=1)
    add_column_per_row: bool = False
    add_column_chunk_rows: int = Field(default=25, ge=1)
    sort_numerical_only: bool = False
    group_threshold: float = 0.8
    view_rows: int = Field(default=30, ge=1)
    sample_view: bool = True
    repairs: int = Field(default=1, ge=0)
    reuse_plan: bool = True
    plan_arguments: bool = True
    ask_when_plan_unusable: bool = False
    replan_after_chain: bool = False
    chat_messages: bool = False
    lowercase_wikitq: bool = False
    mask_digits: bool = False
    seed: int | None = 0
    constrain: bool = True
    large_table_rows: int | None = Field(default=1000, ge=1)


PROFILES: Registry[ChainOfTableSettings] = Registry("Chain-of-Table profile")
PROFILES.register(
    "paper",
    ChainOfTableSettings(
        profile="paper",
        select_samples=8,
        select_temperature=0.5,
        select_union=2,
        add_column_per_row=True,
        sort_numerical_only=True,
        view_rows=100,
        sample_view=False,
        repairs=0,
        reuse_plan=False,
        plan_arguments=False,
        ask_when_plan_unusable=True,
        replan_after_chain=True,
        chat_messages=True,
        lowercase_wikitq=True,
        mask_digits=True,
        constrain=False,
        large_table_rows=None,
    ),
)
PROFILES.register("efficient", ChainOfTableSettings())
