"""The method catalog: every registered method, by name, and how to build one.

:data:`METHODS` maps a name to a :class:`~tablereason.methods.base.MethodSpec`: the
factory, and whether it takes the run's task and data folder (declared here, never
read from signatures). :func:`build_method` is the one way ``ask``, the harness and the
command line turn a method name into a :class:`~tablereason.methods.base.Method`.

Importing the catalog also registers Chain-of-Table as the Table tool's default
reasoner (:data:`~tablereason.tools.table_tool.TABLE_REASONERS`): the tools layer
imports no method, so the methods layer hands it one.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> method = build_method("chain_of_table", ScriptedLLM(replies=[]), task="wikitq")
    >>> method.task, METHODS.get("chain_of_table").takes_task
    ('wikitq', True)
"""

from __future__ import annotations

import os
from typing import Any

from tablereason.llm.base import LLM
from tablereason.methods.base import Method, MethodSpec
from tablereason.methods.baselines import ProgramOfThought, TextToSQL
from tablereason.methods.chain_of_table.method import ChainOfTable
from tablereason.methods.chameleon import ChainOfThought, Chameleon
from tablereason.methods.chameleon import ProgramOfThought as ChameleonProgramOfThought
from tablereason.methods.react import ReAct
from tablereason.methods.rewoo.method import ReWOO
from tablereason.registry import Registry
from tablereason.tools.table_tool import DEFAULT_TABLE_REASONER, TABLE_REASONERS

METHODS: Registry[MethodSpec] = Registry("method")
"""Every method ``ask``, ``tablereason eval`` and :func:`build_method` know, by name."""

METHODS.register("chain_of_table", MethodSpec(ChainOfTable, takes_task=True))
METHODS.register("program_of_thought", MethodSpec(ProgramOfThought))
METHODS.register("text_to_sql", MethodSpec(TextToSQL))
METHODS.register("rewoo", MethodSpec(ReWOO, takes_task=True, takes_data_dir=True))
METHODS.register("react", MethodSpec(ReAct, takes_task=True, takes_data_dir=True))
METHODS.register("chameleon", MethodSpec(Chameleon, takes_task=True))
METHODS.register("chameleon_cot", MethodSpec(ChainOfThought, takes_task=True))
METHODS.register("chameleon_pot", MethodSpec(ChameleonProgramOfThought, takes_task=True))


def table_reasoner(llm: LLM) -> ChainOfTable:
    """The Table tool's default reasoner: Chain-of-Table with short (WikiTQ) answers.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> TABLE_REASONERS.get(DEFAULT_TABLE_REASONER) is table_reasoner
        True
        >>> table_reasoner(ScriptedLLM(replies=[])).task
        'wikitq'
    """
    return ChainOfTable(llm, task="wikitq")


TABLE_REASONERS.register(DEFAULT_TABLE_REASONER, table_reasoner)


def method_names() -> list[str]:
    """Names of the registered methods, in registration order.

    Example:
        >>> method_names()[:3]
        ['chain_of_table', 'program_of_thought', 'text_to_sql']
    """
    return METHODS.names()


def build_method(
    name: str,
    llm: LLM,
    *,
    task: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Method:
    """Create the method registered as ``name`` for ``llm``.

    Args:
        name: A name in :data:`METHODS` (``"chain_of_table"``).
        llm: The model the method asks.
        task: What kind of question it answers (``"wikitq"``: open questions,
            ``"tabfact"``: statements to verify); passed only to methods registered with
            ``takes_task``.
        data_dir: The run's data folder; passed only to methods registered with
            ``takes_data_dir`` (ReWOO and ReAct, whose default tools read the HotpotQA or
            ScienceQA files).
        **options: Further constructor options (``profile="paper"``, ...).

    Returns:
        The method; answer with ``method.run(example)``.

    Raises:
        UnknownNameError: For an unknown method (naming the closest one).
        ConfigurationError: For options the method does not accept.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> method = build_method("chain_of_table", ScriptedLLM(replies=[]), profile="paper")
        >>> method.config()["settings"]["profile"]
        'paper'
    """
    spec = METHODS.get(name)
    return spec.build(llm, task=task, data_dir=data_dir, registered_as=name, **options)
