"""The method catalog: every registered method, by name, and how to build one.

:data:`METHODS` maps a name to a :class:`~tablereason.methods.base.MethodSpec` that
says where the method is (``"module:attr"``); the module is imported the first time the
method is built or described, so reading the catalog loads no method, and a method
can build another by name (:func:`build_method`) without an import cycle: the catalog
imports none of them. What a method takes of the run (its task, the data folder,
several tables) it declares itself. :func:`build_method` is the one way ``ask``, the
harness and the command line turn a method name into a
:class:`~tablereason.methods.base.Method`.

Methods of other distributions join through the ``tablereason.methods`` entry-point
group: an entry ``name = "package.module:Factory"`` is registered, unloaded, the first
time the catalog is read (a built-in name wins over an entry point's).

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

import logging
import os
import threading
from collections.abc import Iterator
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from tablereason.methods.base import Method, MethodSpec
from tablereason.registry import Registry
from tablereason.tools.table_tool import DEFAULT_TABLE_REASONER, TABLE_REASONERS

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.base import LLM
    from tablereason.methods.chain_of_table.method import ChainOfTable

ENTRY_POINT_GROUP = "tablereason.methods"
"""The entry-point group other distributions register their methods in."""

_log = logging.getLogger(__name__)


class MethodCatalog(Registry[MethodSpec]):
    """The method registry, which also reads the entry-point group once, on first use."""

    def __init__(self) -> None:
        super().__init__("method")
        self._discovered = False
        self._discovery = threading.Lock()

    def discover(self) -> None:
        """Register the ``tablereason.methods`` entry points not registered yet (once).

        An entry point is registered by its value, so its module loads only when the
        method is built; one whose name is taken is left out with a warning.
        """
        if self._discovered:
            return
        with self._discovery:
            if self._discovered:
                return
            for point in entry_points(group=ENTRY_POINT_GROUP):
                if point.name in self._items:
                    _log.warning("method %r of an entry point is already registered", point.name)
                    continue
                self._items[point.name] = MethodSpec(point.value)
            self._discovered = True

    def get(self, name: str) -> MethodSpec:
        """The method registered as ``name`` (entry points included)."""
        self.discover()
        return super().get(name)

    def names(self) -> list[str]:
        """Registered names: the built-in ones in registration order, then entry points'."""
        self.discover()
        return super().names()

    def items(self) -> list[tuple[str, MethodSpec]]:
        """Registered (name, spec) pairs (entry points included)."""
        self.discover()
        return super().items()

    def __contains__(self, name: object) -> bool:
        self.discover()
        return super().__contains__(name)

    def __iter__(self) -> Iterator[str]:
        self.discover()
        return super().__iter__()

    def __len__(self) -> int:
        self.discover()
        return super().__len__()


METHODS = MethodCatalog()
"""Every method ``ask``, ``tablereason eval`` and :func:`build_method` know, by name."""

_BUILT_IN = {
    "chain_of_table": "tablereason.methods.chain_of_table.method:ChainOfTable",
    "program_of_thought": "tablereason.methods.baselines.program_of_thought:ProgramOfThought",
    "text_to_sql": "tablereason.methods.baselines.text_to_sql:TextToSQL",
    "rewoo": "tablereason.methods.rewoo.method:ReWOO",
    "react": "tablereason.methods.react:ReAct",
    "chameleon": "tablereason.methods.chameleon.method:Chameleon",
    "chameleon_cot": "tablereason.methods.chameleon.baselines:ChainOfThought",
    "chameleon_pot": "tablereason.methods.chameleon.baselines:ProgramOfThought",
    "self_consistency": "tablereason.methods.composed.self_consistency:SelfConsistency",
    "mix_sc": "tablereason.methods.composed.mix_sc:MixSC",
    "table_critic": "tablereason.methods.composed.table_critic:TableCritic",
}
for _name, _target in _BUILT_IN.items():
    METHODS.register(_name, MethodSpec(_target))


def table_reasoner(llm: LLM) -> ChainOfTable:
    """The Table tool's default reasoner: Chain-of-Table with short (WikiTQ) answers.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> TABLE_REASONERS.get(DEFAULT_TABLE_REASONER) is table_reasoner
        True
        >>> table_reasoner(ScriptedLLM(replies=[])).task
        'wikitq'
    """
    from tablereason.methods.chain_of_table.method import ChainOfTable

    return ChainOfTable(llm, task="wikitq")


TABLE_REASONERS.register(DEFAULT_TABLE_REASONER, table_reasoner)


def method_names() -> list[str]:
    """Names of the registered methods, in registration order.

    Example:
        >>> method_names()[:3]
        ['chain_of_table', 'program_of_thought', 'text_to_sql']
    """
    return METHODS.names()


def several_table_methods() -> list[str]:
    """The registered methods that answer over several named tables (this loads each).

    Example:
        >>> several_table_methods()
        ['program_of_thought', 'text_to_sql', 'rewoo', 'react']
    """
    return [name for name, spec in METHODS.items() if _loads(spec) and spec.takes_several_tables]


def _loads(spec: MethodSpec) -> bool:
    """Whether a spec's method can be loaded (a broken entry point is skipped)."""
    try:
        spec.factory  # noqa: B018 - loading is the check
    except Exception:
        return False
    return True


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
            ``"tabfact"``: statements to verify); passed only to methods that declare
            ``takes_task``.
        data_dir: The run's data folder; passed only to methods that declare
            ``takes_data_dir`` (ReWOO and ReAct, whose default tools read the HotpotQA or
            ScienceQA files).
        **options: Further constructor options (``profile="paper"``, ...).

    Returns:
        The method; answer with ``method.run(example)``.

    Raises:
        UnknownNameError: For an unknown method (naming the closest one).
        ConfigurationError: For options the method does not accept, or a method that
            cannot be loaded.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> method = build_method("chain_of_table", ScriptedLLM(replies=[]), profile="paper")
        >>> method.config()["settings"]["profile"]
        'paper'
    """
    spec = METHODS.get(name)
    return spec.build(llm, task=task, data_dir=data_dir, registered_as=name, **options)
