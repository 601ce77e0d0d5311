"""One way in for a table: :func:`load_table` from a file, a DataFrame, Arrow data or a table.

The file readers are :mod:`tablereason.table.io.readers` (CSV, TSV, JSON, JSON lines),
:mod:`tablereason.table.io.workbooks` (Excel) and :mod:`tablereason.table.io.columnar`
(Parquet, Arrow, DuckDB and SQLite tables); :func:`load_table` picks one by the
file's suffix, so callers (``tablereason.load_table``, ``tablereason.ask``, the CLI)
need not know which.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from tablereason.errors import ConfigurationError
from tablereason.table.io.columnar import read_arrow_data
from tablereason.table.io.readers import read_table_file
from tablereason.table.types import declare_types
from tablereason.table.value import Table

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

TableSource = Union["Table", "pd.DataFrame", Any, str, os.PathLike]
"""What :func:`load_table` accepts: a Table, a DataFrame (pandas or polars), Arrow data
or a file path."""


def load_table(
    source: TableSource,
    *,
    caption: str | None = None,
    delimiter: str | None = None,
    format: str | None = None,
    table: str | None = None,
    types: Mapping[str, str] | str | None = None,
) -> Table:
    """Read a table from a :class:`~tablereason.table.Table`, a DataFrame or a file.

    Files: CSV (WikiTableQuestions' backslash escapes or standard doubled quotes), TSV,
    CSV exported by Excel (byte-order mark, ``;`` separators, a ``sep=;`` first line,
    Windows-1252 text), JSON (a list of records, a list of rows with the header first,
    ``{"columns": [...], "data": [[...]]}`` or ``{"header": [...], "rows": [[...]]}``),
    JSON lines (one record per line) and ``.xlsx`` (needs ``openpyxl``). The suffix
    says which; a file with any other suffix is refused unless ``format`` says how to
    read it.

    Args:
        source: The table, a pandas DataFrame, or a path.
        caption: Caption for tables read from a DataFrame or a file.
        delimiter: Field separator for text files; guessed from the file when ``None``.
        format: How to read a file: ``"csv"``, ``"tsv"``, ``"json"``, ``"jsonl"``,
            ``"xlsx"``, ``"parquet"``, ``"arrow"`` or ``"database"``; by default what its
            suffix says.
        table: The table of a database file (``.duckdb``, ``.sqlite``) to read; may be
            left out when the database holds one table.
        types: Column types that replace the declared or inferred ones, by column name
            (``{"zip": "text"}``), or one type for every column (``"text"`` keeps every
            column as text); see :mod:`tablereason.table.types`.

    Returns:
        The table; cells are text exactly as given (a typed source's values as DuckDB
        writes them), and each column has a type (``table.types``).

    Raises:
        TableParseError: When the file cannot be read as a table
            (:class:`~tablereason.table.io.readers.UnknownFormatError` for a suffix of no
            format, without ``format``).
        ConfigurationError: When ``source`` is of an unsupported type, or for an unknown
            ``format``.

    Example:
        >>> load_table("examples/taymyr_births.csv").columns[:2]
        ['Column 1', 'Average population (x 1000)']
        >>> load_table(Table.from_records(["a"], [["1"]])).num_rows
        1
    """
    loaded = _read(source, caption, delimiter, format, table)
    if types is not None:
        if loaded is source:  # a Table is a value: its types are its own
            raise ConfigurationError(
                "types= is for a table being loaded; a Table already has its types"
            )
        declare_types(loaded, types)
    return loaded


def _read(
    source: TableSource,
    caption: str | None,
    delimiter: str | None,
    format: str | None,
    table: str | None,
) -> Table:
    if isinstance(source, Table):
        return source
    if isinstance(source, (str, os.PathLike)):
        return read_table_file(Path(source), caption, delimiter, format, table)
    if type(source).__name__ == "DataFrame" and type(source).__module__.startswith("pandas"):
        return Table.from_pandas(source, caption=caption)
    if hasattr(source, "to_arrow") or type(source).__module__.startswith("pyarrow"):
        return read_arrow_data(source, caption)
    raise ConfigurationError(
        f"cannot read a table from {type(source).__name__}; pass a Table, a pandas or polars "
        "DataFrame, an Arrow table, or the path of a CSV, TSV, JSON, Excel, Parquet, Arrow or "
        "database file"
    )
