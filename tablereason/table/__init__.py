"""The table engine: the immutable :class:`Table` value, its storage in DuckDB and its files.

``Table`` and ``Step`` are the public names; the modules below hold the engine's parts
(``value``: the Table itself, built, read and shown; ``verbs``: its operation methods,
``apply`` and ``replay``, the engine's one way up to :mod:`tablereason.operations`;
``kernel``: what operations may use of a table; ``lineage``: the ``Step``; ``storage``,
``relation``: rows in DuckDB; ``types``: column types and missing cells;
``typed_frame``: a table as the SQL worker receives it; ``formats``: text forms; ``io``:
file readers and :func:`load_table`). Model-written SQL runs in
:mod:`tablereason.sandbox.sql`, beside the Python sandbox.

Example:
    >>> from tablereason.table import Table
    >>> Table.from_records(["a"], [["1"], ["2"]]).num_rows
    2
"""

from tablereason.table.lineage import Step
from tablereason.table.value import Table

__all__ = ["Step", "Table"]
