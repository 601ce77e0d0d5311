"""The five Chain-of-Table steps, by operation name: :data:`STEPS`.

A step is called as ``step(session, table, given)`` with the table so far and the
argument the generated chain gave it (or ``None``). It asks the model for the
operation's arguments (unless the chain's are usable), applies the profile's
acceptance rules (skip, fall back) and, when they pass, the matching
:class:`~tablereason.table.Table` operation. It adds one trace step and returns a
:class:`~tablereason.methods.chain_of_table.state.StepResult`: its chain entry, the
new table or the groups. A bad reply never raises; only the reference's empty group
column does (:class:`~tablereason.methods.chain_of_table.group_sort.GroupCrash`).

Example:
    >>> STEPS.names()
    ['add_column', 'select_row', 'select_column', 'group_column', 'sort_column']
"""

from __future__ import annotations

from collections.abc import Callable

from tablereason.methods.chain_of_table.add_column import add_column
from tablereason.methods.chain_of_table.chain_arguments import ChainArgument
from tablereason.methods.chain_of_table.group_sort import group_column, sort_column
from tablereason.methods.chain_of_table.select import select_column, select_row
from tablereason.methods.chain_of_table.session import Session
from tablereason.methods.chain_of_table.state import StepResult
from tablereason.registry import Registry
from tablereason.table.value import Table

Step = Callable[[Session, Table, ChainArgument | None], StepResult]
"""``step(session, table, given) -> StepResult``."""

STEPS: Registry[Step] = Registry("Chain-of-Table step")
for _name, _step in (
    ("add_column", add_column),
    ("select_row", select_row),
    ("select_column", select_column),
    ("group_column", group_column),
    ("sort_column", sort_column),
):
    STEPS.register(_name, _step)
