"""The table engine: the immutable :class:`Table` value, its storage in DuckDB and its files.

``Table`` and ``Step`` are the public names; the modules below hold the engine's parts
(``value``: the Table and its kernel for operations; ``storage``, ``relation``: rows in
DuckDB; ``formats``: cell text; ``sqlguard``, ``sqlengine``, ``sqlworker``, ``sqllimits``:
model SQL; ``io``: file readers).

Example:
    >>> from tablereason.table import Table
    >>> Table.from_records(["a"], [["1"], ["2"]]).num_rows
    2
"""

from tablereason.table.value import Step, Table

__all__ = ["Step", "Table"]
