"""The examples in the core modules' docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tablereason",
    "tablereason.errors",
    "tablereason.registry",
    "tablereason.table.formats",
    "tablereason.table.sqlguard",
    "tablereason.table",
    "tablereason.operations",
    "tablereason.operations.add_column",
    "tablereason.operations.cell_retrieval",
    "tablereason.operations.filter_rows",
    "tablereason.operations.row_expressions",
    "tablereason.operations.table_profile",
    "tablereason.operations.group_by",
    "tablereason.operations.lookup_columns",
    "tablereason.operations.lookup_rows",
    "tablereason.operations.select_columns",
    "tablereason.operations.select_rows",
    "tablereason.operations.sort_by",
    "tablereason.operations.sql_query",
    "tablereason.operations.verbalize",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if name != "tablereason.operations":
        assert result.attempted > 0, f"{name} has no runnable example"
