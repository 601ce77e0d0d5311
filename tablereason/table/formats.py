r"""Text forms of a table: header naming, CSV reading, the PIPE form, Markdown and HTML.

The PIPE form is the text Chain-of-Table shows a model::

    table caption : 1992 olympics
    col : name | year
    row 1 : ann | 1992
    row 2 :  | 1996

Separators are exactly ``" : "`` and ``" | "``; an empty cell is an empty
string. By default cells are printed exactly as stored, as the reference
prints them, except that a line break inside a cell (which the line-based form
cannot hold) is shown as a space. That text is ambiguous only for cells that
contain ``" | "`` or line breaks; the escaped variant (``escape=True``) writes
such cells and any backslash with backslash escapes (``\\n``, ``\\|``,
``\\\\``) so that :func:`parse_pipe` with ``escaped=True`` reads every table back
exactly.
"""

from __future__ import annotations

import csv
import html
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from tablereason.errors import TableParseError

CAPTION_PREFIX = "table caption : "
HEADER_PREFIX = "col : "
CELL_SEP = " | "
_ROW = re.compile(r"row (\d+) : ")
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "|": "\\|"}
_UNESCAPE = re.compile(r"\\(.)", re.S)
_UNESCAPED = {"n": "\n", "r": "\r", "|": "|", "\\": "\\"}


def unique_names(labels: Sequence[str]) -> list[str]:
    """Display names for header labels: unique, non-empty, stable and readable.

    A unique, non-empty label is kept as given. An empty label becomes
    ``Column <position>`` (1-based); a repeated label gets ``_2``, ``_3``... in
    order of appearance. Generated names never collide with given ones.

    Example:
        >>> unique_names(["Year", "", "Year", "Column 2"])
        ['Year', 'Column 2_2', 'Year_2', 'Column 2']
    """
    reserved = {label for label in labels if label.strip()}
    taken: set[str] = set()
    names: list[str] = []
    for position, label in enumerate(labels, start=1):
        if label.strip() and label not in taken:
            name = label
        else:
            base = label if label.strip() else f"Column {position}"
            name = base
            suffix = 2
            while name in taken or (name in reserved and name != label):
                name = f"{base}_{suffix}"
                suffix += 1
        taken.add(name)
        names.append(name)
    return names


def needs_escape(text: str) -> bool:
    """True when printing ``text`` raw would make the PIPE form ambiguous."""
    return (
        "\\" in text
        or "\n" in text
        or "\r" in text
        or CELL_SEP in text
        or text.startswith("| ")
        or text.endswith(" |")
        or text == "|"
    )


def escape_cell(text: str) -> str:
    """Escape the characters that would break the PIPE form."""
    if not needs_escape(text):
        return text
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def unescape_cell(text: str) -> str:
    """Undo :func:`escape_cell`."""
    if "\\" not in text:
        return text
    return _UNESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group(0)), text)


def _raw_cell(text: str) -> str:
    if "\n" in text or "\r" in text:
        return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return text


def format_pipe(
    caption: str | None,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    escape: bool = False,
) -> str:
    """Render the PIPE form (no trailing newline); see the module notes on ``escape``."""
    cell = escape_cell if escape else _raw_cell
    lines: list[str] = []
    if caption is not None:
        lines.append(CAPTION_PREFIX + cell(caption))
    lines.append(HEADER_PREFIX + CELL_SEP.join(cell(h) for h in header))
    for i, row in enumerate(rows, start=1):
        lines.append(f"row {i} : " + CELL_SEP.join(cell(c) for c in row))
    return "\n".join(lines)


def format_markdown(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    r"""Render a Markdown table; ``|`` in a cell is escaped and a line break becomes a space.

    Example:
        >>> print(format_markdown(["a", "b"], [["x|y", "2"]]))
        | a | b |
        |---|---|
        | x\|y | 2 |
    """

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def format_html(
    caption: str | None, header: Sequence[str], rows: Iterable[Sequence[str]], more: int = 0
) -> str:
    """Render an HTML ``<table>`` (text escaped), noting ``more`` rows not shown after it."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    tail = f"<p>{more} more rows</p>" if more > 0 else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{tail}"


def parse_pipe(
    text: str, *, escaped: bool = False
) -> tuple[str | None, list[str], list[list[str]]]:
    """Parse the PIPE form into caption, header and rows.

    A ``/*`` ... ``*/`` wrapper, as methods put around tables in prompts, is
    ignored. With ``escaped`` true, backslash escapes written by
    ``format_pipe(..., escape=True)`` are undone.

    Raises:
        TableParseError: When the ``col :`` line is missing, a row line is
            malformed, rows are numbered out of order or have the wrong width.
    """
    lines = text.split("\n")
    if lines and lines[0].strip() == "/*":
        lines = lines[1:]
    if lines and lines[-1].strip() == "*/":
        lines = lines[:-1]
    unescape = unescape_cell if escaped else str
    caption: str | None = None
    if lines and lines[0].startswith(CAPTION_PREFIX.rstrip()):
        caption = unescape_cell(lines[0][len(CAPTION_PREFIX) :])
        lines = lines[1:]
    if not lines or not (lines[0].startswith(HEADER_PREFIX) or lines[0] == HEADER_PREFIX.rstrip()):
        raise TableParseError(
            "not a PIPE table: expected a line starting with 'col : ' "
            "(optionally after 'table caption : ...')"
        )
    header = [unescape(h) for h in lines[0][len(HEADER_PREFIX) :].split(CELL_SEP)]
    rows: list[list[str]] = []
    for number, line in enumerate(lines[1:], start=1):
        match = _ROW.match(line)
        if match is None or int(match.group(1)) != number:
            raise TableParseError(
                f"line {number + 1} of the PIPE table should start with 'row {number} : ', "
                f"got {line[:40]!r}"
            )
        cells = [unescape(c) for c in line[match.end() :].split(CELL_SEP)]
        if len(cells) != len(header):
            raise TableParseError(
                f"row {number} has {len(cells)} cells but the header has {len(header)}"
            )
        rows.append(cells)
    return caption, header, rows


def read_csv_rows(
    path: Path, *, delimiter: str = ",", escape: str | None = "\\"
) -> Iterator[list[str]]:
    r"""Stream the rows of a CSV file, every field as text.

    The default dialect is WikiTableQuestions': ``"`` quotes fields, a backslash
    escapes ``"`` and ``\\`` inside them, and quoted line breaks stay in the
    cell. Pass ``escape=None`` for standard CSV with doubled quotes.
    """
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(
            handle, delimiter=delimiter, escapechar=escape, doublequote=escape is None
        )
        try:
            yield from reader
        except csv.Error as error:
            raise TableParseError(f"{path}: line {reader.line_num}: {error}") from error
