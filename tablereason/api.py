"""The one-line entry point: :func:`ask` a question about a table.

:func:`load_table` is re-exported from :mod:`tablereason.table.io.load`.

Example:
    >>> import tablereason as tr  # doctest: +SKIP
    >>> prediction = tr.ask("examples/taymyr_births.csv",  # doctest: +SKIP
    ...                     "what year was the first to reach 1,000 or more live births?")
    >>> prediction.answer, len(prediction.tables)  # doctest: +SKIP
    (['1985'], 4)
"""

from __future__ import annotations

from typing import Any

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM
from tablereason.llm.resolve import resolve_llm
from tablereason.methods.base import TableMethod
from tablereason.methods.catalog import build_method
from tablereason.table.io.load import TableSource, load_table
from tablereason.table.io.readers import DELIMITERS, sniff_delimiter
from tablereason.trace.record import Prediction

__all__ = ["DELIMITERS", "TableSource", "ask", "load_table", "sniff_delimiter"]


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
