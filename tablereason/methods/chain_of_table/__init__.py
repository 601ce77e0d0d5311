"""Chain-of-Table (Wang et al., ICLR 2024): plan table operations, apply them, answer.

``method`` holds :class:`ChainOfTable`; ``planner`` picks the next operation; ``steps``
asks for one operation's arguments and applies it; ``parse`` reads the model's replies;
``session`` carries one question's state; ``settings`` the two profiles; ``views`` and
``large_view`` build the table text the prompts show; ``large`` the mode for tables past
the view; ``demos`` the few-shot chains.

Example:
    >>> from tablereason.methods.chain_of_table import PROFILES
    >>> PROFILES.names()
    ['paper', 'efficient']
"""

from tablereason.methods.chain_of_table.method import ChainOfTable, completions
from tablereason.methods.chain_of_table.settings import PROFILES, ChainOfTableSettings

__all__ = ["PROFILES", "ChainOfTable", "ChainOfTableSettings", "completions"]
