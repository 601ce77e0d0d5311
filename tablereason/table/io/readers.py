"""Reading table files: CSV and TSV, JSON and JSON lines, Excel, Parquet, Arrow, databases.

Every reader streams where the format allows it: CSV, TSV and JSON lines go row by row
into DuckDB (see :meth:`~tablereason.table.Table.from_rows`), so loading a large file
holds only a chunk of rows in Python; a JSON document is parsed whole (Python has no
streaming JSON parser), up to :data:`MAX_JSON_BYTES`. Text files are decoded as
:mod:`tablereason.table.io.text` describes, which also refuses files that are not text;
workbooks are checked before they are expanded (:mod:`tablereason.table.io.workbooks`);
Parquet and Arrow files and tables of DuckDB and SQLite databases stream in chunks with
their column types (:mod:`tablereason.table.io.columnar`).

The reader is chosen by the file's suffix (:data:`SUFFIXES`), or by ``format``
(:data:`FORMATS`) for a file whose suffix says nothing or says something else: a file
with any other suffix is refused (:class:`UnknownFormatError`) rather than read as CSV,
so a README or a script is never taken for a table.

Every failure to read a file is a :class:`~tablereason.errors.TableParseError` that
names the file and says what to do.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from tablereason.errors import ConfigurationError, TableError, TableParseError
from tablereason.table.io import MAX_COLUMNS
from tablereason.table.io.columnar import read_arrow_file, read_database, read_parquet
from tablereason.table.io.text import SAMPLE_BYTES, check_text, sniff_encoding
from tablereason.table.io.workbooks import read_workbook
from tablereason.table.storage import to_text
from tablereason.table.value import Table

DELIMITERS = (",", ";", "\t", "|")
MAX_JSON_BYTES = 256 * 1024 * 1024
"""Largest JSON document read (it is parsed whole); JSON lines and CSV have no limit."""
CSV_SUFFIXES = (".csv", ".txt")
"""CSV, and delimited text (Excel's "Text" and "Unicode Text" exports are ``.txt``)."""
TSV_SUFFIXES = (".tsv", ".tab")
JSON_SUFFIXES = (".json",)
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
EXCEL_SUFFIXES = (".xlsx", ".xlsm", ".xls")
PARQUET_SUFFIXES = (".parquet", ".pq")
ARROW_SUFFIXES = (".arrow", ".feather", ".ipc", ".arrows")
DATABASE_SUFFIXES = (".duckdb", ".ddb", ".sqlite", ".sqlite3", ".db")
"""Database files: DuckDB or SQLite, told apart by the file's first bytes."""
SUFFIXES: dict[str, tuple[str, ...]] = {
    "csv": CSV_SUFFIXES,
    "tsv": TSV_SUFFIXES,
    "json": JSON_SUFFIXES,
    "jsonl": JSON_LINES_SUFFIXES,
    "xlsx": EXCEL_SUFFIXES,
    "parquet": PARQUET_SUFFIXES,
    "arrow": ARROW_SUFFIXES,
    "database": DATABASE_SUFFIXES,
}
"""The file suffixes of each format."""
FORMATS = tuple(SUFFIXES)
"""The formats ``format=`` (``--format`` on the command line) names."""


LIBRARY_HOW = f"format='csv' (or {', '.join(repr(f) for f in FORMATS[1:])})"
"""How a caller of :func:`~tablereason.table.io.load.load_table` names a format."""


class UnknownFormatError(TableParseError):
    """A file whose suffix names no table format, read without ``format``.

    Args:
        path: The file.
        how: How the caller's user names a format (``"format='csv'"``, ``"--format csv"``).
    """

    def __init__(self, path: Path, how: str = LIBRARY_HOW) -> None:
        self.path = path
        self.suffix = path.suffix
        super().__init__(self.message(how))

    def message(self, how: str) -> str:
        """The refusal, saying how to name the format the way the reader can (``how``)."""
        what = f"its suffix {self.suffix!r}" if self.suffix else "it has no suffix that"
        known = ", ".join(s for group in SUFFIXES.values() for s in group)
        return (
            f"{self.path}: {what} names no table format ({known}); if it holds a table, "
            f"say how to read it: {how}"
        )


def table_format(path: Path, format: str | None = None) -> str:
    """The format to read ``path`` as: ``format`` when given, else its suffix's.

    Raises:
        ConfigurationError: For a ``format`` that is not one of :data:`FORMATS`.
        UnknownFormatError: For a suffix of no format, without ``format``.

    Example:
        >>> table_format(Path("a.TSV")), table_format(Path("notes.txt"), "csv")
        ('tsv', 'csv')
    """
    if format is not None:
        chosen = format.strip().lower()
        if chosen not in FORMATS:
            raise ConfigurationError(
                f"unknown table format {format!r}; choose one of {', '.join(FORMATS)}"
            )
        return chosen
    suffix = path.suffix.lower()
    for name, suffixes in SUFFIXES.items():
        if suffix in suffixes:
            return name
    raise UnknownFormatError(path)


def read_table_file(
    path: Path,
    caption: str | None,
    delimiter: str | None,
    format: str | None = None,
    table: str | None = None,
) -> Table:
    """Read a table file, choosing the reader by ``format``, else by the file's suffix.

    Args:
        path: The file.
        caption: Caption of the table.
        delimiter: Field separator for text files; guessed when ``None``.
        format: One of :data:`FORMATS` (``"csv"``, ``"tsv"``, ``"json"``, ``"jsonl"``,
            ``"xlsx"``, ``"parquet"``, ``"arrow"``, ``"database"``); by default the one
            its suffix names.
        table: The table to read from a database file (may be left out when it holds
            one); refused for other formats.

    Returns:
        The table; cells are text exactly as given.

    Raises:
        TableParseError: When the file is missing or cannot be read as a table.
        UnknownFormatError: For a suffix of no format, without ``format``.
        MissingDependencyError: For ``.xlsx`` without ``openpyxl``.
    """
    if not path.exists():
        raise TableParseError(f"{path}: no such file; give the path of a CSV, TSV or JSON table")
    if path.is_dir():
        raise TableParseError(f"{path}: is a folder; give the path of a table file inside it")
    if not path.is_file():
        raise TableParseError(
            f"{path}: not a regular file (a device or a pipe?); save the table to a file first"
        )
    kind = table_format(path, format)
    if table is not None and kind != "database":
        raise ConfigurationError(
            f"{path}: a table name ({table!r}) is for a database file (.duckdb, .sqlite), "
            f"and this file is read as {kind}"
        )
    try:
        if kind == "parquet":
            return read_parquet(path, caption)
        if kind == "arrow":
            return read_arrow_file(path, caption)
        if kind == "database":
            return read_database(path, table, caption)
        if kind == "xlsx":
            return read_workbook(path, caption)
        if kind == "json":
            return _read_json(path, caption)
        if kind == "jsonl":
            return _read_json_lines(path, caption)
        return _read_delimited(path, caption, delimiter, tsv=kind == "tsv")
    except TableParseError:
        raise
    except TableError as err:  # e.g. no column at all
        raise TableParseError(f"{path}: {err}") from err
    except RecursionError as err:
        raise TableParseError(
            f"{path}: nested too deeply to read as a table; give a flat table (rows of cells)"
        ) from err
    except UnicodeError as err:
        raise TableParseError(
            f"{path}: cannot be decoded as text ({err}); re-save it as UTF-8"
        ) from err
    except OSError as err:
        raise TableParseError(f"{path}: cannot be read ({err.strerror or err})") from err


def sniff_delimiter(sample: str) -> str:
    r"""Guess the field separator of CSV text: the candidate giving the most, equal columns.

    Example:
        >>> sniff_delimiter('name;score\n"Ann";1,5\n"Bo";2,0\n')
        ';'
    """
    lines = sample.splitlines()[:30]
    if len(sample) >= SAMPLE_BYTES and len(lines) > 1:
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


def _read_delimited(path: Path, caption: str | None, delimiter: str | None, *, tsv: bool) -> Table:
    encoding = sniff_encoding(path)
    with path.open(encoding=encoding, errors="replace", newline="") as handle:
        sample = handle.read(SAMPLE_BYTES)
    check_text(sample, path)
    first, _, rest = sample.partition("\n")
    hint = first.strip()
    skip_first = hint.lower().startswith("sep=") and len(hint) == 5  # Excel's separator line
    if skip_first:
        delimiter, sample = hint[4], rest
    if delimiter is None:
        delimiter = "\t" if tsv else sniff_delimiter(sample)
    escape = "\\" if '\\"' in sample else None
    rows = _csv_rows(path, encoding, delimiter, escape, skip_first=skip_first)
    return Table.from_rows(rows, caption, source=str(path))


def _csv_rows(
    path: Path, encoding: str, delimiter: str, escape: str | None, *, skip_first: bool
) -> Iterator[list[str]]:
    with path.open(encoding=encoding, errors="replace", newline="") as handle:
        offset = 0
        if skip_first:
            handle.readline()
            offset = 1
        reader = csv.reader(
            handle, delimiter=delimiter, escapechar=escape, doublequote=escape is None
        )
        try:
            for row in reader:
                if len(row) > MAX_COLUMNS:
                    raise _too_wide(path, reader.line_num + offset, len(row))
                yield row
        except csv.Error as err:
            raise TableParseError(
                f"{path}: line {reader.line_num + offset}: {err}; check the quoting, or give "
                "the separator with delimiter=..."
            ) from err


def _too_wide(path: Path, line: int, width: int) -> TableParseError:
    return TableParseError(
        f"{path}: line {line} has {width:,} fields, more than the {MAX_COLUMNS:,} a table may "
        "have; is the separator right (delimiter=...)?"
    )


def _read_json(path: Path, caption: str | None) -> Table:
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise TableParseError(
            f"{path}: a {size / 2**20:,.0f} MiB JSON document is larger than the "
            f"{MAX_JSON_BYTES // 2**20} MiB read whole; write it as JSON lines (.jsonl, one "
            "record per line) or CSV, which stream"
        )
    encoding = sniff_encoding(path)
    text = path.read_text(encoding=encoding, errors="replace")
    check_text(text[:SAMPLE_BYTES], path)
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as err:
        raise TableParseError(f"{path}: not valid JSON ({err}); fix the file") from err
    del text
    header, rows = _json_table(data, path)
    return Table.from_rows(_text_rows(path, header, rows), caption, source=str(path))


def _json_table(data: Any, path: Path) -> tuple[list[Any], Iterator[list[Any]]]:
    """The header and rows of a parsed JSON document in one of the accepted layouts."""
    if isinstance(data, dict):
        if "columns" in data and "data" in data and _rows_of_lists(data["data"]):
            return _as_list(data["columns"], path), (list(r) for r in data["data"])
        if "header" in data and "rows" in data and _rows_of_lists(data["rows"]):
            return _as_list(data["header"], path), (list(r) for r in data["rows"])
        if data and all(isinstance(v, list) for v in data.values()):
            header = list(data)
            height = max(len(v) for v in data.values())
            return header, ([_at(data[k], i) for k in header] for i in range(height))
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        header = list(dict.fromkeys(k for record in data for k in record))
        return header, ([record.get(k) for k in header] for record in data)
    if isinstance(data, list) and data and all(isinstance(r, list) for r in data):
        return list(data[0]), (list(r) for r in data[1:])
    raise TableParseError(
        f"{path}: expected a list of records, a list of rows with the header first, "
        '{"columns": [...], "data": [[...]]} or {"header": [...], "rows": [[...]]}'
    )


def _rows_of_lists(rows: Any) -> bool:
    return isinstance(rows, list) and all(isinstance(r, list) for r in rows)


def _as_list(header: Any, path: Path) -> list[Any]:
    if not isinstance(header, list):
        raise TableParseError(f"{path}: the header must be a list of names, got {header!r:.60}")
    return header


def _at(values: list[Any], index: int) -> Any:
    return values[index] if index < len(values) else None


def _text_rows(path: Path, header: list[Any], rows: Iterator[list[Any]]) -> Iterator[list[str]]:
    if len(header) > MAX_COLUMNS:
        raise _too_wide(path, 1, len(header))
    yield [to_text(h) for h in header]
    for number, row in enumerate(rows, start=2):
        if len(row) > MAX_COLUMNS:
            raise _too_wide(path, number, len(row))
        yield [to_text(c) for c in row]


def _read_json_lines(path: Path, caption: str | None) -> Table:
    """JSON lines: records (the header is every key, in order of appearance) or rows.

    Read twice, streaming: once for the header, once for the rows.
    """
    encoding = sniff_encoding(path)
    with path.open(encoding=encoding, errors="replace") as handle:
        check_text(handle.read(SAMPLE_BYTES), path)
    lines = _json_lines(path, encoding)
    first = next(lines, None)
    lines.close()
    if first is None:
        raise TableParseError(f"{path}: the file is empty; expected one JSON record per line")
    if isinstance(first[1], list):  # rows, the header first
        rows = (_expect(value, list, path, n) for n, value in _json_lines(path, encoding))
        return Table.from_rows(_text_rows(path, next(rows), rows), caption, source=str(path))
    keys: dict[str, None] = {}
    for number, value in _json_lines(path, encoding):
        keys.update(dict.fromkeys(_expect(value, dict, path, number)))
        if len(keys) > MAX_COLUMNS:
            raise _too_wide(path, number, len(keys))
    header = list(keys)
    records = (
        [record.get(k) for k in header]
        for record in (value for _, value in _json_lines(path, encoding))
    )
    return Table.from_rows(_text_rows(path, header, records), caption, source=str(path))


def _json_lines(path: Path, encoding: str) -> Generator[tuple[int, Any], None, None]:
    with path.open(encoding=encoding, errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as err:
                raise TableParseError(
                    f"{path}: line {number} is not valid JSON ({err}); fix that line"
                ) from err


def _expect(value: Any, kind: type, path: Path, number: int) -> Any:
    if not isinstance(value, kind):
        what = "records (objects)" if kind is dict else "rows (lists)"
        raise TableParseError(
            f"{path}: line {number} is {type(value).__name__}, but the first line makes this "
            f"a file of {what}; every line must be one"
        )
    return value
