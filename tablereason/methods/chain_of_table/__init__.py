"""Chain-of-Table (Wang et al., ICLR 2024): plan table operations, apply them, answer.

One question, top to bottom: ``method`` (:class:`ChainOfTable`) opens a ``session``
(the fixed inputs and the model calls) and a ``state`` (table, chain, groups); the
``planner`` picks each next operation; ``steps`` maps it to its step in
``add_column``, ``select`` or ``group_sort`` (``large`` for tables past the view),
which returns what it changed; ``answer`` asks the final query. Around them:
``parse`` and ``reference_parse`` read the replies, ``chain_arguments`` applies the
arguments a generated chain gives, ``settings`` and ``rules`` hold the two profiles,
``views`` and ``large_view`` build the table text the prompts show, ``demos`` says
where the few-shot chains come from.

Example:
    >>> from tablereason.methods.chain_of_table import PROFILES
    >>> PROFILES.names()
    ['paper', 'efficient']
"""

from tablereason.methods.chain_of_table.method import ChainOfTable, completions
from tablereason.methods.chain_of_table.settings import PROFILES, ChainOfTableSettings

__all__ = ["PROFILES", "ChainOfTable", "ChainOfTableSettings", "completions"]
