"""tablereason: step-by-step language-model reasoning over tables.

Importing the package is cheap: heavy pieces (DuckDB, pandas, model backends)
load on first use.

Example:
    >>> import tablereason as tr
    >>> t = tr.Table.from_records(["name", "year"], [["Ann", "1999"], ["Bo", "2001"]])
    >>> t.sort_by("year", descending=True).to_records()[1]
    ['Bo', '2001']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tablereason.errors import (
    ConfigurationError,
    DatasetError,
    ExecutionError,
    LLMError,
    MissingDependencyError,
    ParseError,
    RowIndexError,
    SandboxError,
    SQLError,
    TableError,
    TableParseError,
    TableReasonError,
    UnknownColumnError,
    UnknownNameError,
)
from tablereason.lazy_names import lazy_names
from tablereason.old_paths import install as _install_old_paths
from tablereason.registry import Registry

_install_old_paths()

__version__ = "0.1.0"

# Public names that load lazily: name -> module that defines it.
_LAZY = {
    "Table": "tablereason.table",
    "Step": "tablereason.table",
    "operations": "tablereason.operations",
    "ask": "tablereason.api",
    "load_table": "tablereason.table.io.load",
    "Prediction": "tablereason.trace",
    "Trace": "tablereason.trace",
}

if TYPE_CHECKING:  # pragma: no cover
    from tablereason import operations
    from tablereason.api import ask
    from tablereason.table.io.load import load_table
    from tablereason.table.value import Step, Table
    from tablereason.trace.record import Prediction, Trace


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


__all__ = [
    "ConfigurationError",
    "DatasetError",
    "ExecutionError",
    "LLMError",
    "MissingDependencyError",
    "ParseError",
    "Prediction",
    "Registry",
    "RowIndexError",
    "SQLError",
    "SandboxError",
    "Step",
    "Table",
    "TableError",
    "TableParseError",
    "TableReasonError",
    "Trace",
    "UnknownColumnError",
    "UnknownNameError",
    "__version__",
    "ask",
    "load_table",
    "operations",
]
