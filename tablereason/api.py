"""One-line entry points: :func:`ask` a question about a table, :func:`load_table` from a file.

Example:
    >>> import tablereason as tr  # doctest: +SKIP
    >>> prediction = tr.ask("examples/taymyr_births.csv",  # doctest: +SKIP
    ...                     "what year was the first to reach 1,000 or more live births?")
    >>> prediction.answer, len(prediction.tables)  # doctest: +SKIP
    (['1985'], 4)
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from tablereason.errors import ConfigurationError, MissingDependencyError, TableParseError
from tablereason.llm.base import LLM
from tablereason.resolve import build_method, resolve_llm, run_example, takes_table
from tablereason.trace import Prediction

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from tablereason.table import Table

TableSource = Union["Table", "pd.DataFrame", str, os.PathLike]
"""What :func:`ask` and :func:`load_table` accept: a Table, a DataFrame or a file path."""

DELIMITERS = (",", ";", "\t", "|")
_SAMPLE_BYTES = 64 * 1024
_TSV_SUFFIXES = (".tsv", ".tab")
_JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
_EXCEL_SUFFIXES = (".xlsx", ".xlsm", ".xls")


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
    from tablereason.table import Table

    if isinstance(source, Table):
        return source
    if isinstance(source, (str, os.PathLike)):
        return _read_file(Path(source), caption, delimiter)
    if type(source).__name__ == "DataFrame":
        return Table.from_pandas(source, caption=caption)
    raise ConfigurationError(
        f"cannot read a table from {type(source).__name__}; pass a Table, a pandas DataFrame "
        "or the path of a CSV, TSV, JSON or Excel file"
    )


def _read_file(path: Path, caption: str | None, delimiter: str | None) -> Table:
    from tablereason.table import Table

    if not path.is_file():
        raise TableParseError(f"{path}: no such file; give the path of a CSV, TSV or JSON table")
    suffix = path.suffix.lower()
    if suffix in _JSON_SUFFIXES:
        header, rows = _json_rows(path)
        return Table.from_records(header, rows, caption=caption)
    if suffix in _EXCEL_SUFFIXES:
        return _read_excel(path, caption)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
        utf8 = True
    except UnicodeDecodeError:  # Excel on Windows writes the ANSI code page
        text, utf8 = raw.decode("cp1252", errors="replace"), False
    first, _, rest = text.partition("\n")
    explicit = first.strip().lower()
    if explicit.startswith("sep=") and len(explicit) == 5:  # Excel's separator hint
        delimiter, text, utf8 = first.strip()[4], rest, False
    if delimiter is None:
        delimiter = "\t" if suffix in _TSV_SUFFIXES else sniff_delimiter(text[:_SAMPLE_BYTES])
    escape = "\\" if '\\"' in text[:_SAMPLE_BYTES] else None
    if utf8:
        return Table.from_csv(path, caption=caption, delimiter=delimiter, escape=escape)
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=delimiter,
        escapechar=escape,
        doublequote=escape is None,
    )
    try:
        records = list(reader)
    except csv.Error as err:
        raise TableParseError(f"{path}: line {reader.line_num}: {err}") from err
    if not records:
        raise TableParseError(f"{path}: the file is empty; expected a header line")
    return Table.from_records(records[0], records[1:], caption=caption)


def sniff_delimiter(sample: str) -> str:
    r"""Guess the field separator of CSV text: the candidate giving the most, equal columns.

    Example:
        >>> sniff_delimiter('name;score\n"Ann";1,5\n"Bo";2,0\n')
        ';'
    """
    lines = sample.splitlines()[:30]
    if len(sample) >= _SAMPLE_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    best, best_width = ",", 1
    for candidate in DELIMITERS:
        try:
            widths = {len(row) for row in csv.reader(lines, delimiter=candidate) if row}
        except csv.Error:
            continue
        if len(widths) == 1 and (width := widths.pop()) > best_width:
            best, best_width = candidate, width
    return best


def _json_rows(path: Path) -> tuple[list[Any], list[list[Any]]]:
    text = path.read_text(encoding="utf-8-sig")
    try:
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            data: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except json.JSONDecodeError as err:
        raise TableParseError(f"{path}: not valid JSON ({err})") from err
    if isinstance(data, dict):
        if "columns" in data and "data" in data:
            return list(data["columns"]), [list(r) for r in data["data"]]
        if "header" in data and "rows" in data:
            return list(data["header"]), [list(r) for r in data["rows"]]
        if data and all(isinstance(v, list) for v in data.values()):
            header = list(data)
            height = max(len(v) for v in data.values())
            return header, [[_at(data[k], i) for k in header] for i in range(height)]
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        header = list(dict.fromkeys(k for record in data for k in record))
        return header, [[record.get(k) for k in header] for record in data]
    if isinstance(data, list) and data and all(isinstance(r, list) for r in data):
        return list(data[0]), [list(r) for r in data[1:]]
    raise TableParseError(
        f"{path}: expected a list of records, a list of rows with the header first, "
        '{"columns": [...], "data": [[...]]} or {"header": [...], "rows": [[...]]}'
    )


def _at(values: list[Any], index: int) -> Any:
    return values[index] if index < len(values) else None


def _read_excel(path: Path, caption: str | None) -> Table:
    import pandas as pd

    from tablereason.table import Table

    try:
        frame = pd.read_excel(path, dtype=str, keep_default_na=False)
    except ImportError as err:
        raise MissingDependencyError(
            f"reading {path.suffix} files needs openpyxl: pip install openpyxl "
            "(or export the sheet as CSV)"
        ) from err
    return Table.from_pandas(frame, caption=caption)


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
    if takes_table(built):
        prediction: Prediction = built.run(data, question)
        return prediction
    from tablereason.datasets.example import Example

    return run_example(built, Example.from_table(data, question, dataset="ask"))
