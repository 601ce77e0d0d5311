"""What a Chain-of-Table question builds up: the table, the chain record, the group facts.

Each step returns a :class:`StepResult` (the chain entry, plus the new table or the
groups when it made them) and the run loop makes the next :class:`ChainState` from
it with :meth:`ChainState.after`; no step writes into shared state. :func:`keep` and
:func:`skip` finish a step's trace record and build its result.

Example:
    >>> from tablereason.table import Table
    >>> state = ChainState(table=Table.from_records(["a"], [["1"], ["2"]]))
    >>> result = StepResult(ChainEntry("select_row", True, "f_select_row(row 1)"),
    ...                     table=state.table.select_rows([0]))
    >>> later = state.after(result)
    >>> later.table.num_rows, [entry.text for entry in later.chain]
    (1, ['f_select_row(row 1)'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tablereason.methods.chain_of_table.session import finish

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import TraceStep


@dataclass(frozen=True)
class ChainEntry:
    """One record of the operation chain, as the reference logs it.

    ``text`` is the ``act_chain`` string (``f_select_row(row 1, row 2)``, ``skip f_sort_column()``).
    """

    op: str
    kept: bool
    text: str


@dataclass(frozen=True)
class Groups:
    """What a kept group step found: the column and its (value, count) groups.

    Attributes:
        column: The grouped column.
        counts: ``(value, count)`` pairs, most frequent first.
        total: The number of groups in all when only the largest are in ``counts``
            (the large-table mode); ``None`` otherwise.
    """

    column: str
    counts: list[tuple[str, int]]
    total: int | None = None


@dataclass(frozen=True)
class StepResult:
    """What one step changed: its chain entry, and the new table or groups, if any."""

    entry: ChainEntry
    table: Table | None = None
    groups: Groups | None = None


@dataclass(frozen=True)
class ChainState:
    """The table after the steps so far, the chain record and the group facts."""

    table: Table
    chain: tuple[ChainEntry, ...] = ()
    groups: Groups | None = None

    def after(self, result: StepResult) -> ChainState:
        """The state once ``result`` is applied: its table and groups, its entry appended."""
        return ChainState(
            table=self.table if result.table is None else result.table,
            chain=(*self.chain, result.entry),
            groups=self.groups if result.groups is None else result.groups,
        )


def keep(
    step: TraceStep,
    op: str,
    text: str,
    before: Table,
    *,
    after: Table | None = None,
    grouped: Groups | None = None,
    **arguments: object,
) -> StepResult:
    """A kept step: record ``arguments`` and the table after it, stop its clock.

    Args:
        step: The step's trace record.
        op: The operation name.
        text: Its chain text (``f_select_row(row 1)``).
        before: The table the step started from.
        after: The new table, when the step changed it.
        grouped: The groups, for a kept group step.
        **arguments: Added to the step's arguments.
    """
    step.arguments.update(arguments)
    step.table = before if after is None else after
    finish(step)
    return StepResult(ChainEntry(op=op, kept=True, text=text), table=after, groups=grouped)


def skip(step: TraceStep, op: str, reason: str, table: Table) -> StepResult:
    """A skipped step: its error (unless one is set), a note, the unchanged table."""
    step.error = step.error or reason
    step.note = f"skipped: {reason}" + (f"; {step.note}" if step.note else "")
    step.table = table
    finish(step)
    return StepResult(ChainEntry(op=op, kept=False, text=f"skip f_{op}()"))
