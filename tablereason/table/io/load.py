"""One way in for a table: :func:`load_table` from a file, a pandas DataFrame or a table.

The file readers are :mod:`tablereason.table.io.readers` (CSV, TSV, JSON, JSON lines)
and :mod:`tablereason.table.io.workbooks` (Excel); :func:`load_table` picks one by the
file's suffix, so callers (``tablereason.load_table``, ``tablereason.ask``, the CLI)
need not know which.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Union

from tablereason.errors import ConfigurationError
from tablereason.table.io.readers import read_table_file
from tablereason.table.value import Table

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

TableSource = Union["Table", "pd.DataFrame", str, os.PathLike]
"""What :func:`load_table` accepts: a Table, a DataFrame or a file path."""


def load_table(
    source: TableSource,
    *,
    caption: str | None = None,
    delimiter: str | None = None,
    format: str | None = None,
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
        format: How to read a file: ``"csv"``, ``"tsv"``, ``"json"``, ``"jsonl"`` or
            ``"xlsx"``; by default what its suffix says.

    Returns:
        The table; cells are text exactly as given.

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
    if isinstance(source, Table):
        return source
    if isinstance(source, (str, os.PathLike)):
        return read_table_file(Path(source), caption, delimiter, format)
    if type(source).__name__ == "DataFrame":
        return Table.from_pandas(source, caption=caption)
    raise ConfigurationError(
        f"cannot read a table from {type(source).__name__}; pass a Table, a pandas DataFrame "
        "or the path of a CSV, TSV, JSON or Excel file"
    )
