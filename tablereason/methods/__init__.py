"""Reasoning methods: each answers one example (a table and a question, ...) as a ``Prediction``.

Every method satisfies :class:`~tablereason.methods.base.Method` (``run(example)`` and
``config()``); methods over a table and a question are
:class:`~tablereason.methods.base.TableMethod` s, which also take ``run(table, question)``.
They are registered by name in :data:`METHODS` (see :mod:`.catalog`); :func:`build_method`
builds one.

Example:
    >>> from tablereason.methods import METHODS
    >>> "chain_of_table" in METHODS
    True
"""

from __future__ import annotations

from tablereason.methods.base import Method, MethodSpec, TableMethod
from tablereason.methods.baselines import ProgramOfThought, TextToSQL
from tablereason.methods.catalog import METHODS, build_method, method_names
from tablereason.methods.chain_of_table.method import ChainOfTable
from tablereason.methods.chain_of_table.settings import PROFILES, ChainOfTableSettings
from tablereason.methods.chameleon import ChainOfThought, Chameleon
from tablereason.methods.chameleon import ProgramOfThought as ChameleonProgramOfThought
from tablereason.methods.react import ReAct
from tablereason.methods.rewoo.method import ReWOO

__all__ = [
    "METHODS",
    "PROFILES",
    "ChainOfTable",
    "ChainOfTableSettings",
    "ChainOfThought",
    "Chameleon",
    "ChameleonProgramOfThought",
    "Method",
    "MethodSpec",
    "ProgramOfThought",
    "ReAct",
    "ReWOO",
    "TableMethod",
    "TextToSQL",
    "build_method",
    "method_names",
]
