"""Reasoning methods: each answers one example (a table and a question, ...) as a ``Prediction``.

Every method satisfies :class:`~tablereason.methods.base.Method` (``run(example)`` and
``config()``); methods over a table and a question are
:class:`~tablereason.methods.base.TableMethod` s, which also take ``run(table, question)``.
They are registered by name in :data:`METHODS` (see :mod:`.catalog`); :func:`build_method`
builds one. Importing this package loads only the contract: the catalog and each method
load when first named here.

Example:
    >>> from tablereason.methods import METHODS
    >>> "chain_of_table" in METHODS
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tablereason.lazy_names import lazy_names
from tablereason.methods.base import Method, MethodSpec, TableMethod

_LAZY = {
    "METHODS": "tablereason.methods.catalog",
    "build_method": "tablereason.methods.catalog",
    "method_names": "tablereason.methods.catalog",
    "PROFILES": "tablereason.methods.chain_of_table.settings",
    "ChainOfTable": "tablereason.methods.chain_of_table.method",
    "ChainOfTableSettings": "tablereason.methods.chain_of_table.settings",
    "ProgramOfThought": "tablereason.methods.baselines",
    "TextToSQL": "tablereason.methods.baselines",
    "ChainOfThought": "tablereason.methods.chameleon.baselines",
    "Chameleon": "tablereason.methods.chameleon.method",
    "ReAct": "tablereason.methods.react",
    "ReWOO": "tablereason.methods.rewoo.method",
    "SelfConsistency": "tablereason.methods.composed.self_consistency",
    "MixSC": "tablereason.methods.composed.mix_sc",
    "TableCritic": "tablereason.methods.composed.table_critic",
}

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.methods.baselines import ProgramOfThought, TextToSQL
    from tablereason.methods.catalog import METHODS, build_method, method_names
    from tablereason.methods.chain_of_table.method import ChainOfTable
    from tablereason.methods.chain_of_table.settings import PROFILES, ChainOfTableSettings
    from tablereason.methods.chameleon.baselines import ChainOfThought
    from tablereason.methods.chameleon.baselines import (
        ProgramOfThought as ChameleonProgramOfThought,
    )
    from tablereason.methods.chameleon.method import Chameleon
    from tablereason.methods.composed.mix_sc import MixSC
    from tablereason.methods.composed.self_consistency import SelfConsistency
    from tablereason.methods.composed.table_critic import TableCritic
    from tablereason.methods.react import ReAct
    from tablereason.methods.rewoo.method import ReWOO

_getattr, _dir = lazy_names(__name__, _LAZY, globals())


def __getattr__(name: str) -> object:
    if name == "ChameleonProgramOfThought":  # exported under another name than its own
        from tablereason.methods.chameleon.baselines import ProgramOfThought as chameleon_pot

        globals()[name] = chameleon_pot
        return chameleon_pot
    return _getattr(name)


def __dir__() -> list[str]:
    return sorted({*_dir(), "ChameleonProgramOfThought"})


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
    "MixSC",
    "ProgramOfThought",
    "ReAct",
    "ReWOO",
    "SelfConsistency",
    "TableCritic",
    "TableMethod",
    "TextToSQL",
    "build_method",
    "method_names",
]
