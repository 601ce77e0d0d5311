"""The rules that tell the paper profile from the efficient one, beyond the settings fields.

Most differences between the two profiles are settings (samples, repairs, views...,
see :mod:`~tablereason.methods.chain_of_table.settings`). The rest are rules of the
reference that the efficient profile replaces as a whole; each is a field of
:class:`ProfileRules`, so a step reads ``session.rules.empty_group_crashes`` instead
of testing the profile's name. :data:`PAPER_RULES` and :data:`EFFICIENT_RULES` are
the two rule sets; :func:`rules_for` picks one by profile name.

Example:
    >>> rules_for("paper").plan_reply.max_tokens, rules_for("efficient").plan_reply.max_tokens
    (200, 64)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    """The length limit and stop strings of one kind of model call."""

    max_tokens: int
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProfileRules:
    """One profile's rules (REFERENCE.md section 1 for the paper's; docs/chain_of_table.md).

    Attributes:
        reference_prompts: Ask with the reference's prompts, whose free-text replies
            the reference's regular expressions read (the ``*_paper`` parsers):
            select-row and sort prompts with the stripped table, select-column with
            the JSON table, the group and sort prompts with the first rows only, the
            planner with one demo per allowed operation. Otherwise the efficient
            prompts, which end where a short structured reply starts.
        prompt_prefix: What the step prompts' template names start with (``""`` for
            ``select_row``, ``"efficient_"`` for ``efficient_select_row``).
        plan_reply: Limits of a planning call.
        selection_reply: Limits of a sampled row or column selection call.
        always_sample_selection: Sample ``select_samples`` completions and vote even
            when that is 1 (the reference); otherwise a single selection is asked for
            with the bounded re-ask.
        chain_arguments: Whether the arguments a generated chain gives may be applied
            (also needs ``settings.plan_arguments``).
        case_sensitive_add_column: Add-column rules compare names and values
            case-sensitively and reject identical values even on a one-row table.
        empty_group_crashes: A group column with only empty cells loses the example
            (the reference divides by zero); otherwise the group is skipped.
        sort_checks_monotonic: Skip a sort when the column's values, read as the
            reference reads numbers, are already in order, and sort with numbers read
            the reference's way; otherwise skip a sort only when it leaves the rows
            as they were.
        note_first_rows: Note on the input step that the prompts show only the first
            ``view_rows`` rows of a longer table (the reference's view).
    """

    reference_prompts: bool
    prompt_prefix: str
    plan_reply: Reply
    selection_reply: Reply
    always_sample_selection: bool
    chain_arguments: bool
    case_sensitive_add_column: bool
    empty_group_crashes: bool
    sort_checks_monotonic: bool
    note_first_rows: bool


PAPER_RULES = ProfileRules(
    reference_prompts=True,
    prompt_prefix="",
    plan_reply=Reply(max_tokens=200, stop=("\n\n",)),
    selection_reply=Reply(max_tokens=150),
    always_sample_selection=True,
    chain_arguments=False,
    case_sensitive_add_column=True,
    empty_group_crashes=True,
    sort_checks_monotonic=True,
    note_first_rows=True,
)
"""The reference's rules (``profile="paper"``)."""

EFFICIENT_RULES = ProfileRules(
    reference_prompts=False,
    prompt_prefix="efficient_",
    plan_reply=Reply(max_tokens=64, stop=("\n",)),
    selection_reply=Reply(max_tokens=60, stop=("])", "\n")),
    always_sample_selection=False,
    chain_arguments=True,
    case_sensitive_add_column=False,
    empty_group_crashes=False,
    sort_checks_monotonic=False,
    note_first_rows=False,
)
"""The efficient profile's rules (``profile="efficient"``, the default)."""


def rules_for(profile: str) -> ProfileRules:
    """The rules of ``profile``: :data:`PAPER_RULES` for ``"paper"``, else the efficient ones."""
    return PAPER_RULES if profile == "paper" else EFFICIENT_RULES
