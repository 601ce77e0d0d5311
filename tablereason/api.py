"""One-line entry points: :func:`ask` a question about a table, :func:`load_table` from a file.

Example:
    >>> import tablereason as tr  # doctest: +SKIP
    >>> prediction = tr.ask("examples/taymyr_births.csv",  # doctest: +SKIP
    ...                     "what year was the first to reach 1,000 or more live births?")
    >>> prediction.answer, len(prediction.tables)  # doctest: +SKIP
    (['1985'], 4)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM
from tablereason.llm.resolve import resolve_llm
from tablereason.methods.base import TableMethod
from tablereason.methods.catalog import build_method
from tablereason.table.io.readers import DELIMITERS, read_table_file, sniff_delimiter
from tablereason.trace.record import Prediction

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from tablereason.table.value import Table

TableSource = Union["Table", "pd.DataFrame", str, os.PathLike]
"""What :func:`ask` and :func:`load_table` accept: a Table, a DataFrame or a file path."""

__all__ = ["DELIMITERS", "TableSource", "ask", "load_table", "sniff_delimiter"]


def load_table(
    source: TableSource, *, caption: str | None = None, delimiter: str | None = None
) -> Table:
    """Read a table from a :class:`~tablereason.table.Table`, a DataFrame or a file.

    Files: CSV (WikiTableQuestions' backslash escapes or standard doubled quotes), TSV,
    CSV exported by Excel (byte-order mark, ``;`` separators, a ``sep=;`` first line,
    Windows-1252 text), JSON (a list of records, a list of rows with the header first,
    ``{"columns": [...], "data": [[...]]}`` or ``{"header": [...], "rows": [[...]]}``),
    JSON lines (one record per line) and ``.xlsx`` (needs ``openpyxl``).

    Args:
        source: The table, a pandas DataFrame, or a path.
        caption: Caption for tables read from a DataFrame or a file.
        delimiter: Field separator for text files; guessed from the file when ``None``.

    Returns:
        The table; cells are text exactly as given.

    Raises:
        TableParseError: When the file cannot be read as a table.
        ConfigurationError: When ``source`` is of an unsupported type.

    Example:
        >>> load_table("examples/taymyr_births.csv").columns[:2]
        ['Column 1', 'Average population (x 1000)']
    """
    from tablereason.table.value import Table

    if isinstance(source, Table):
        return source
    if isinstance(source, (str, os.PathLike)):
        return read_table_file(Path(source), caption, delimiter)
    if type(source).__name__ == "DataFrame":
        return Table.from_pandas(source, caption=caption)
    raise ConfigurationError(
        f"cannot read a table from {type(source).__name__}; pass a Table, a pandas DataFrame "
        "or the path of a CSV, TSV, JSON or Excel file"
    )


def ask(
    table: TableSource,
    question: str,
    method: str = "chain_of_table",
    llm: LLM | str | None = None,
    *,
    caption: str | None = None,
    **options: Any,
) -> Prediction:
    """Answer a question about a table, keeping every intermediate table.

    Args:
        table: A :class:`~tablereason.table.Table`, a pandas DataFrame, or the path of a
            CSV, TSV, JSON or Excel-exported file (see :func:`load_table`).
        question: The question (or, with ``task="tabfact"``, a statement to verify).
        method: A registered method name (``tablereason.methods.METHODS``).
        llm: An LLM object, a model spec (``"local"``, ``"gpt-4o-mini"``, a ``.gguf``
            path), or ``None`` for the environment's default (see
            :func:`tablereason.llm.default`).
        caption: Caption for a table read from a file or a DataFrame.
        **options: Method options, e.g. ``profile="paper"``; ``task`` defaults to
            ``"wikitq"`` (open questions) for methods that take one.

    Returns:
        A :class:`~tablereason.trace.Prediction`: ``.answer``, ``.trace`` and
        ``.tables`` (every intermediate table). A bad model reply never raises; a failed
        run sets ``.error``.

    Raises:
        ConfigurationError: For an empty question or options the method does not take.
        UnknownNameError: For an unknown method.
        TableParseError: For a file that cannot be read as a table.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"city": ["Oslo", "Rome"], "people": ["0.7", "2.8"]})
        >>> llm = ScriptedLLM(fn=lambda request: "<END>" if "f_" in request.as_text() else "Rome")
        >>> ask(frame, "which city has more people?", llm=llm).answer
        ['Rome']
    """
    if not question or not question.strip():
        raise ConfigurationError("the question is empty; ask something about the table")
    data = load_table(table, caption=caption)
    model = llm if llm is not None and not isinstance(llm, str) else resolve_llm(llm)
    task = options.pop("task", "wikitq")
    built = build_method(method, model, task=task, **options)
    if isinstance(built, TableMethod):
        # The same door with the table itself: Example.from_table copies every row into
        # Python lists, which would multiply the memory of a question on a large file.
        return built.run(data, question)
    return built.run(Example.from_table(data, question, dataset="ask"))
