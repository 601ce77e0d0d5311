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

import contextlib
from collections.abc import Mapping
from typing import Any

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM
from tablereason.llm.redaction import redact
from tablereason.llm.resolve import resolve_llm
from tablereason.methods.catalog import METHODS, build_method, several_table_methods
from tablereason.table.io.load import TableSource, load_table
from tablereason.table.io.readers import DELIMITERS, sniff_delimiter
from tablereason.table.named import TableSet
from tablereason.table.value import Table
from tablereason.trace.listen import StepCallback, following
from tablereason.trace.record import Prediction, Trace, TraceStep

__all__ = ["DELIMITERS", "TableSource", "ask", "is_answered", "load_table", "sniff_delimiter"]


def ask(
    table: TableSource | Mapping[str, TableSource],
    question: str,
    method: str = "chain_of_table",
    llm: LLM | str | None = None,
    *,
    caption: str | None = None,
    types: Mapping[str, str] | str | None = None,
    on_step: StepCallback | None = None,
    **options: Any,
) -> Prediction:
    """Answer a question about a table, keeping every intermediate table.

    Args:
        table: A :class:`~tablereason.table.Table`, a DataFrame, Arrow data, or the path
            of a table file (see :func:`load_table`); or several named tables,
            ``{"flights": flights, "airlines": "airlines.csv"}``, for the methods that
            take several (``text_to_sql``, ``program_of_thought``, ``react``, ``rewoo``).
        question: The question (or, with ``task="tabfact"``, a statement to verify).
        method: A registered method name (``tablereason.methods.METHODS``).
        llm: An LLM object, a model spec (``"local"``, ``"gpt-4o-mini"``, a ``.gguf``
            path), or ``None`` for the environment's default (see
            :func:`tablereason.llm.default`).
        caption: Caption for a table read from a file or a DataFrame.
        types: Column types for a table being loaded (see :func:`load_table`).
        on_step: Called with each :class:`~tablereason.trace.TraceStep` of the run as
            soon as it is complete, while the question is still being answered (see
            :func:`tablereason.trace.listen.following`, which also reports starts).
        **options: Method options, e.g. ``profile="paper"``; ``task`` defaults to
            ``"wikitq"`` (open questions) for methods that take one.

    Returns:
        A :class:`~tablereason.trace.Prediction`: ``.answer``, ``.trace`` and
        ``.tables`` (every intermediate table), and its checks: ``.value`` (the answer
        typed and normalised), ``.evidence`` (the cells of ``table`` it rests on) and
        ``.warnings`` (see :mod:`tablereason.answers`). A bad model reply never raises; a run
        that ends without an answer has ``.error`` saying why (an empty answer
        included). A table with no rows is answered without the model: the
        prediction's error says the table is empty.

    Raises:
        ConfigurationError: For an empty question or options the method does not take,
            or several tables for a method that takes one (the message names those
            that take several).
        UnknownNameError: For an unknown method.
        TableParseError: For a file that cannot be read as a table.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"city": ["Oslo", "Rome"], "people": ["0.7", "2.8"]})
        >>> llm = ScriptedLLM(fn=lambda request: "<END>" if "f_" in request.as_text() else "Rome")
        >>> steps = []
        >>> ask(frame, "which city has more people?", llm=llm, on_step=steps.append).answer
        ['Rome']
        >>> [step.kind for step in steps]
        ['input', 'plan', 'answer']
    """
    if not question or not question.strip():
        raise ConfigurationError("the question is empty; ask something about the table")
    if isinstance(table, Mapping):
        data: Table | TableSet = _load_tables(table, method, types)
    else:
        data = load_table(table, caption=caption, types=types)
    model = llm if llm is not None and not isinstance(llm, str) else resolve_llm(llm)
    task = options.pop("task", "wikitq")
    built = build_method(method, model, task=task, **options)
    with following(on_step) if on_step is not None else contextlib.nullcontext():
        if isinstance(data, Table) and data.num_rows == 0:
            return _empty_table(data, question, method)
        # The one door: the example holds the live table(s), no row is copied.
        prediction = built.run(Example.from_table(data, question, dataset="ask"))
    if prediction.error is None and not is_answered(prediction.answer):
        reason = _no_answer_reason(prediction.trace, method)
        prediction = prediction.model_copy(update={"error": reason})
        return prediction.checked(data) if isinstance(data, Table) else prediction
    inputs = [s.table for s in prediction.trace.steps if s.kind == "input" and s.table is not None]
    if isinstance(data, Table) and inputs and inputs[0] is not data:  # the method read a copy
        return prediction.checked(data)
    return prediction


def _load_tables(
    tables: Mapping[str, TableSource], method: str, types: Mapping[str, str] | str | None
) -> TableSet:
    """Several named tables for :func:`ask`, refused for a method that takes one."""
    spec = METHODS.get(method)
    if not spec.takes_several_tables:
        raise ConfigurationError(
            f"{method} answers over one table, and {len(tables)} were given; the methods that "
            f"take several tables are {', '.join(several_table_methods())} (or ask about one "
            "table)"
        )
    return TableSet(
        {name: load_table(source, types=None if isinstance(source, Table) else types)
         for name, source in tables.items()}
    )  # fmt: skip


def is_answered(answer: str | list[str] | None) -> bool:
    """Whether an answer says something: not empty, not only blanks (a list: any item).

    Example:
        >>> is_answered("1985"), is_answered(" "), is_answered([]), is_answered(["", "x"])
        (True, False, False, True)
    """
    if isinstance(answer, list):
        return any(is_answered(item) for item in answer)
    return bool(answer and answer.strip())


def _empty_table(table: Table, question: str, method: str) -> Prediction:
    """The prediction for a table with a header and no rows: nothing for a model to read."""
    trace = Trace(method=method, question=question)
    trace.add(TraceStep(kind="input", name="table", table=table))
    columns = ", ".join(table.columns[:8]) + (", ..." if len(table.columns) > 8 else "")
    return Prediction(
        trace=trace,
        error=f"the table has no rows, only a header ({columns}): there is nothing to answer "
        "from, so the model was not asked",
    )


def _no_answer_reason(trace: Trace, method: str) -> str:
    """Why a run that raised nothing has no answer: the last step that failed, if any."""
    failed = [(n, s) for n, s in enumerate(trace.steps, start=1) if s.error]
    if not failed:
        return f"{method} gave an empty answer (no step reported an error; the trace shows each)"
    number, step = failed[-1]
    return redact(
        f"{method} gave an empty answer; the last error was at step {number} "
        f"({step.kind} {step.name}): {step.error}"
    )
