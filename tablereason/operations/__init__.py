"""Atomic table operations: one module each, registered in :data:`OPERATIONS`.

Each operation is a frozen pydantic argument model plus one pure function
``(Table, args) -> Table``; :class:`~tablereason.table.Table` methods call them,
so there is one implementation of each.

Example:
    >>> from tablereason.operations import OPERATIONS
    >>> "sort_by" in OPERATIONS.names()
    True
"""

from tablereason.operations import (
    add_column,
    filter_rows,
    group_by,
    lookup_columns,
    lookup_rows,
    select_columns,
    select_rows,
    sort_by,
    sql_query,
    verbalize,
)
from tablereason.operations.catalog import OPERATIONS, Operation, OperationArgs, operation

__all__ = [
    "OPERATIONS",
    "Operation",
    "OperationArgs",
    "add_column",
    "filter_rows",
    "group_by",
    "lookup_columns",
    "lookup_rows",
    "operation",
    "select_columns",
    "select_rows",
    "sort_by",
    "sql_query",
    "verbalize",
]
