"""Reading Excel workbooks, checked before they are expanded.

An ``.xlsx`` file is a ZIP archive of XML parts, so a small file can expand to gigabytes
(a "zip bomb") or declare a sheet of billions of cells. Before any part is decompressed,
:func:`check_archive` reads the archive's directory and refuses a workbook whose parts
declare more than :data:`MAX_UNCOMPRESSED_BYTES` in all, a part that is more than
:data:`MAX_RATIO` times smaller compressed than expanded (for parts over 1 MiB), or more
than :data:`MAX_PARTS` parts. The first sheet's declared size and the cells actually read
are both held to :data:`MAX_CELLS`. The ZIP reader stops at each part's declared size, so
a part cannot expand past what its directory entry says.

The first sheet is read with ``openpyxl`` in read-only (streaming) mode, its first
non-empty row being the header. Cells become text as Excel shows them where that is
plain: whole numbers without ``.0``, ``TRUE``/``FALSE``, dates as ``YYYY-MM-DD`` (with the
time when there is one). Old ``.xls`` files are read with pandas (which needs ``xlrd``).
"""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tablereason.errors import MissingDependencyError, TableParseError
from tablereason.table.io import MAX_COLUMNS
from tablereason.table.value import Table

MAX_UNCOMPRESSED_BYTES = 128 * 1024 * 1024
"""Largest total size the parts of a workbook may declare."""
MAX_RATIO = 100
"""Largest expansion (uncompressed over compressed size) of a part over 1 MiB."""
MAX_CELLS = 2_000_000
"""Largest number of cells of the sheet that is read (declared, and read)."""
MAX_PARTS = 10_000
"""Most parts (files) a workbook archive may hold."""
_RATIO_FLOOR = 1024 * 1024


def check_archive(path: Path) -> None:
    """Refuse a damaged workbook, or one whose parts would expand past the limits.

    Reads only the archive's directory: nothing is decompressed.

    Raises:
        TableParseError: For a file that is not a ZIP archive, or past a limit.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.xlsx"
        >>> _ = path.write_text("a,b")
        >>> try:
        ...     check_archive(path)
        ... except TableParseError as err:
        ...     print(str(err).split(": ")[1][:21])
        not an Excel workbook
    """
    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as err:
        raise TableParseError(
            f"{path}: not an Excel workbook, or a damaged or truncated one ({err}); open and "
            "re-save it in Excel, or export the sheet as CSV"
        ) from err
    if len(parts) > MAX_PARTS:
        raise _refused(path, f"its archive holds {len(parts):,} parts (limit {MAX_PARTS:,})")
    total = sum(part.file_size for part in parts)
    if total > MAX_UNCOMPRESSED_BYTES:
        raise _refused(
            path,
            f"its parts expand to {total / 2**20:,.0f} MiB "
            f"(limit {MAX_UNCOMPRESSED_BYTES // 2**20} MiB)",
        )
    for part in parts:
        if part.file_size > _RATIO_FLOOR and part.file_size > MAX_RATIO * max(
            part.compress_size, 1
        ):
            ratio = part.file_size / max(part.compress_size, 1)
            raise _refused(
                path,
                f"its part {part.filename!r} expands {ratio:,.0f} times (limit {MAX_RATIO}), "
                "as a zip bomb does",
            )


def _refused(path: Path, why: str) -> TableParseError:
    return TableParseError(
        f"{path}: refused: {why}; export the sheet as CSV (CSV files have no such limit)"
    )


def read_workbook(path: Path, caption: str | None) -> Table:
    """Read the first sheet of an Excel workbook (see the module notes).

    Raises:
        TableParseError: For a damaged workbook, or one past the limits.
        MissingDependencyError: When ``openpyxl`` (``.xlsx``) or ``xlrd`` (``.xls``) is
            missing.
    """
    if path.suffix.lower() == ".xls":
        return _read_xls(path, caption)
    check_archive(path)
    try:
        import openpyxl
    except ImportError as err:
        raise MissingDependencyError(
            f"reading {path.suffix} files needs openpyxl: pip install openpyxl "
            "(or export the sheet as CSV)"
        ) from err
    with path.open("rb") as handle:  # a handle: openpyxl refuses paths without its suffixes
        try:
            book = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        except Exception as err:  # openpyxl raises many kinds for a damaged file: all mean that
            raise _damaged(path, err) from err
        try:
            if not book.worksheets:
                raise TableParseError(f"{path}: the workbook has no worksheet; add one")
            sheet = book.worksheets[0]
            rows_declared, cols_declared = sheet.max_row or 0, sheet.max_column or 0
            if rows_declared * cols_declared > MAX_CELLS:
                raise _refused(
                    path,
                    f"its first sheet declares {rows_declared:,} rows x {cols_declared:,} "
                    f"columns (limit {MAX_CELLS:,} cells)",
                )
            try:
                rows = _sheet_rows(sheet.iter_rows(values_only=True), path)
                return Table.from_rows(rows, caption, source=str(path))
            except TableParseError:
                raise
            except Exception as err:  # a damaged sheet fails while it is read, in many ways
                raise _damaged(path, err) from err
        finally:
            book.close()


def _damaged(path: Path, err: BaseException) -> TableParseError:
    return TableParseError(
        f"{path}: a damaged workbook ({type(err).__name__}: {err}); open and re-save it in "
        "Excel, or export the sheet as CSV"
    )


def _sheet_rows(rows: Iterable[tuple[Any, ...]], path: Path) -> Iterator[list[str]]:
    """Text rows from the header on; trailing empty cells and rows are left out."""
    cells = 0
    started = False
    empty = 0  # empty rows seen since the last non-empty one
    for values in rows:
        cells += max(1, len(values))
        if cells > MAX_CELLS:
            raise _refused(path, f"its first sheet holds more than {MAX_CELLS:,} cells")
        row = [cell_text(v) for v in values]
        while row and not row[-1]:
            row.pop()
        if len(row) > MAX_COLUMNS:
            raise _refused(path, f"a row has {len(row):,} cells (limit {MAX_COLUMNS:,})")
        if not row:
            empty += started
            continue
        started = True
        yield from ([] for _ in range(empty))
        empty = 0
        yield row


def cell_text(value: Any) -> str:
    """A workbook value as cell text.

    Example:
        >>> cell_text(1985.0), cell_text(2.5), cell_text(True), cell_text(None)
        ('1985', '2.5', 'TRUE', '')
        >>> cell_text(dt.datetime(2020, 1, 31)), cell_text(dt.datetime(2020, 1, 31, 9, 5))
        ('2020-01-31', '2020-01-31 09:05:00')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _read_xls(path: Path, caption: str | None) -> Table:
    import pandas as pd

    try:
        frame = pd.read_excel(path, dtype=str, keep_default_na=False)
    except ImportError as err:
        raise MissingDependencyError(
            "reading .xls files needs xlrd: pip install xlrd (or save the sheet as .xlsx or CSV)"
        ) from err
    except Exception as err:  # xlrd raises many kinds for a damaged file: all mean that
        raise _damaged(path, err) from err
    return Table.from_pandas(frame.astype(object), caption=caption)  # types from the text
