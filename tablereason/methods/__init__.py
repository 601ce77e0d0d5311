"""Reasoning methods: each turns a table and a question into a ``Prediction``.

Methods are registered by name in :data:`METHODS`.

Example:
    >>> from tablereason.methods import METHODS
    >>> "chain_of_table" in METHODS
    True
"""

from __future__ import annotations

from typing import Any

from tablereason.methods.baselines import ProgramOfThought, TextToSQL
from tablereason.methods.chain_of_table.method import ChainOfTable
from tablereason.methods.chain_of_table.settings import PROFILES, ChainOfTableSettings
from tablereason.methods.chameleon import ChainOfThought, Chameleon
from tablereason.methods.chameleon import ProgramOfThought as ChameleonProgramOfThought
from tablereason.methods.react import ReAct
from tablereason.methods.rewoo.method import ReWOO
from tablereason.registry import Registry

METHODS: Registry[Any] = Registry("method")
METHODS.register("chain_of_table", ChainOfTable)
METHODS.register("program_of_thought", ProgramOfThought)
METHODS.register("text_to_sql", TextToSQL)
METHODS.register("rewoo", ReWOO)
METHODS.register("react", ReAct)
METHODS.register("chameleon", Chameleon)
METHODS.register("chameleon_cot", ChainOfThought)
METHODS.register("chameleon_pot", ChameleonProgramOfThought)

__all__ = [
    "METHODS",
    "PROFILES",
    "ChainOfTable",
    "ChainOfTableSettings",
    "ChainOfThought",
    "Chameleon",
    "ProgramOfThought",
    "ReAct",
    "ReWOO",
    "TextToSQL",
]
