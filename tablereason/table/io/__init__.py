"""Reading tables from files.

``readers``: CSV, TSV, JSON and JSON lines; ``text``: encodings and binary checks;
``workbooks``: Excel; ``load``: :func:`~tablereason.table.io.load.load_table`, which
reads a table from a file, a DataFrame or a table. :data:`MAX_COLUMNS` bounds them all.
"""

MAX_COLUMNS = 10_000
"""Widest table a file may hold; a wider row is refused (it is almost surely not a table)."""
