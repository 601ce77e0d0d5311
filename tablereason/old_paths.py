"""Import paths from before the package layout, kept working with a deprecation warning.

Modules that moved into packages (``tablereason.storage`` is now
``tablereason.table.storage``) still import under their old names: the finder below
answers for an old name with the module at its new home, the same object, so
``tablereason.storage is tablereason.table.storage``. Importing an old name warns once
with a :class:`DeprecationWarning` that names the new one.

``tablereason.table``, ``tablereason.trace``, ``tablereason.cli`` and
``tablereason.methods.chain_of_table`` need no alias: they are packages now and export
what the old modules' users imported (``Table``, ``Prediction``, ``main``,
``ChainOfTable``).

Example:
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     import tablereason.storage as old
    >>> import tablereason.table.storage as new
    >>> old is new
    True
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # pragma: no cover
    from importlib.abc import Loader

MOVED: dict[str, str] = {
    "tablereason.storage": "tablereason.table.storage",
    "tablereason.relation": "tablereason.table.relation",
    "tablereason.formats": "tablereason.table.formats",
    "tablereason.sqlguard": "tablereason.sandbox.sql.guard",
    "tablereason.sqlengine": "tablereason.sandbox.sql.engine",
    "tablereason.sqlworker": "tablereason.sandbox.sql.worker",
    "tablereason.sqllimits": "tablereason.sandbox.sql.limits",
    "tablereason.table.sqlguard": "tablereason.sandbox.sql.guard",
    "tablereason.table.sqlengine": "tablereason.sandbox.sql.engine",
    "tablereason.table.sqlworker": "tablereason.sandbox.sql.worker",
    "tablereason.table.sqllimits": "tablereason.sandbox.sql.limits",
    "tablereason.readers": "tablereason.table.io.readers",
    "tablereason.file_text": "tablereason.table.io.text",
    "tablereason.workbooks": "tablereason.table.io.workbooks",
    "tablereason.trace_console": "tablereason.trace.console",
    "tablereason.trace_html": "tablereason.trace.html",
    "tablereason.terminal": "tablereason.trace.terminal",
    "tablereason.cli_parser": "tablereason.cli.parser",
    "tablereason.methods.chain_of_table_demos": "tablereason.methods.chain_of_table.demos",
    "tablereason.methods.chain_of_table_large": "tablereason.methods.chain_of_table.large",
    "tablereason.methods.chain_of_table_large_view": (
        "tablereason.methods.chain_of_table.large_view"
    ),
    "tablereason.methods.chain_of_table_ops": "tablereason.methods.chain_of_table.steps",
    "tablereason.methods.chain_of_table_parse": "tablereason.methods.chain_of_table.parse",
    "tablereason.methods.chain_of_table_planner": "tablereason.methods.chain_of_table.planner",
    "tablereason.methods.chain_of_table_session": "tablereason.methods.chain_of_table.session",
    "tablereason.methods.chain_of_table_settings": "tablereason.methods.chain_of_table.settings",
    "tablereason.methods.chain_of_table_views": "tablereason.methods.chain_of_table.views",
    "tablereason.methods.rewoo_evidence": "tablereason.methods.rewoo.evidence",
    "tablereason.methods.rewoo_parse": "tablereason.methods.rewoo.parse",
    "tablereason.methods.rewoo_workers": "tablereason.methods.rewoo.workers",
    "tablereason.evaluate.metrics": "tablereason.metrics.scorers",
    "tablereason.evaluate.wikitq_eval": "tablereason.metrics.wikitq",
    "tablereason.evaluate.tabmwp_eval": "tablereason.metrics.tabmwp",
    "tablereason.evaluate.hotpotqa_eval": "tablereason.metrics.hotpotqa",
    "tablereason.evaluate.report_svg": "tablereason.evaluate.report.svg",
    "tablereason.evaluate.show": "tablereason.evaluate.report.show",
    "tablereason.llm.local": "tablereason.llm.backends.embedded",
    "tablereason.llm.model_files": "tablereason.llm.backends.model_files",
    "tablereason.llm.scripted": "tablereason.llm.backends.scripted",
    "tablereason.llm.stops": "tablereason.llm.backends.stops",
    "tablereason.llm.openai_backend": "tablereason.llm.backends.server.chat",
    "tablereason.llm.http_transport": "tablereason.llm.backends.server.transport",
    "tablereason.llm.replies": "tablereason.llm.backends.server.replies",
    "tablereason.llm.http_errors": "tablereason.llm.backends.server.status",
    "tablereason.llm.deadline": "tablereason.llm.backends.server.deadline",
    "tablereason.llm.cache": "tablereason.llm.wrappers.cache",
    "tablereason.llm.cache_file": "tablereason.llm.wrappers.cache_file",
    "tablereason.llm.retry": "tablereason.llm.wrappers.retry",
    "tablereason.llm.usage": "tablereason.llm.wrappers.usage",
    "tablereason.llm.limits": "tablereason.llm.wrappers.limits",
    "tablereason.llm.wrapping": "tablereason.llm.wrappers.base",
    "tablereason.llm.selection": "tablereason.llm.resolve",
}
"""Old module name -> the module that replaced it."""


class _Alias:
    """A loader that hands the import system the module at its new home, not a new one.

    (Plain classes: ``importlib.abc`` would cost ``import tablereason`` milliseconds.)
    """

    def __init__(self, old: str, new: str) -> None:
        self.old = old
        self.new = new
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system gave the module the alias's spec; give it back its own.
        module.__spec__ = self.spec
        warnings.warn(
            f"{self.old} moved to {self.new}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )


class OldPathFinder:
    """A meta path finder for the names in :data:`MOVED`."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec whose loader returns the moved module, for an old name; else None."""
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", _Alias(fullname, new)))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (``import tablereason`` does this)."""
    if not any(isinstance(finder, OldPathFinder) for finder in sys.meta_path):
        sys.meta_path.append(OldPathFinder())
