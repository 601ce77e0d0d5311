"""Text views of tables for Chain-of-Table prompts, and the reference's value rules.

* :func:`pipe_block` renders the PIPE form wrapped in ``/*`` ... ``*/`` (as
  google-research/chain-of-table ``utils/helper.py`` does),
  optionally for a subset of rows labelled with their real positions;
* :func:`json_block` renders the JSON form of the reference's select-column prompt;
* :func:`group_block` renders the group sub-table shown to the final query;
* :func:`view_rows` picks a bounded set of rows around what the question mentions;
* :func:`count_groups`, :func:`group_ratio` and :func:`reference_number` reproduce the
  reference's grouping and numeric-sort rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

_WORD = re.compile(r"[0-9a-z]+")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be by did do does for from had has have how in is it many much of on "
        "or than that the their there this to was were what when where which who whom whose why "
        "with",
    )
)


def _cell(text: str) -> str:
    """A cell as prompt text: line breaks would break the row structure, so they become spaces."""
    return text.replace("\r", " ").replace("\n", " ")


cell = _cell
STOPWORDS = _STOPWORDS
"""Words the question-matching views ignore."""


def pipe_text(
    caption: str | None,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    numbers: Sequence[int] | None = None,
) -> str:
    """The PIPE form: optional caption line, ``col : ...``, ``row i : ...`` (no final newline).

    Args:
        caption: Caption to print, or ``None`` for no caption line.
        header: Column names.
        rows: The rows to print.
        numbers: 1-based labels of the printed rows (default 1..len(rows)).

    Example:
        >>> print(pipe_text(None, ["a", "b"], [["", "1"]], numbers=[7]))
        col : a | b
        row 7 :  | 1
    """
    lines = [] if caption is None else [f"table caption : {_cell(caption)}"]
    lines.append("col : " + " | ".join(_cell(h) for h in header))
    labels = numbers if numbers is not None else range(1, len(rows) + 1)
    for number, row in zip(labels, rows, strict=False):
        lines.append(f"row {number} : " + " | ".join(_cell(c) for c in row))
    return "\n".join(lines)


def pipe_block(
    caption: str | None,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    numbers: Sequence[int] | None = None,
    *,
    stripped: bool = False,
) -> str:
    r""":func:`pipe_text` wrapped in ``/*`` and ``*/`` lines, as every prompt shows tables.

    ``stripped`` strips the table text first, as the reference's row-selection, group
    and sort prompts do: a last row that ends in an empty cell loses its final space.

    Example:
        >>> pipe_block(None, ["a"], [["x"]]).split("\n")
        ['/*', 'col : a', 'row 1 : x', '*/', '']
        >>> pipe_block(None, ["a", "b"], [["x", ""]], stripped=True).split("\n")[2]
        'row 1 : x |'
    """
    text = pipe_text(caption, header, rows, numbers)
    return "/*\n" + (text.strip() if stripped else text) + "\n*/\n"


def json_block(caption: str | None, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    r"""The reference's JSON table block for column selection (its ``select_column``).

    The caption and column list are printed as they are; each column line (name then
    every cell) is one ``json.dumps`` line, so non-ASCII text in it is escaped.

    Example:
        >>> print(json_block(None, ["a"], [["é"]]), end="")
        /*
        table = {
          "columns": ["a"],
          "table_column_priority": [
            ["a", "\u00e9"]
          ]
        }
        */
    """
    lines = ["/*", "table = {"]
    if caption is not None:
        lines.append(f'  "table_caption": {json.dumps(caption, ensure_ascii=False)},')
    lines.append(f'  "columns": {json.dumps(list(header), ensure_ascii=False)},')
    lines.append('  "table_column_priority": [')
    body = ["    " + json.dumps([name, *(row[i] for row in rows)]) for i, name in enumerate(header)]
    lines.append(",\n".join(body))
    lines += ["  ]", "}", "*/"]
    return "\n".join(lines) + "\n"


def group_block(column: str, groups: Sequence[tuple[str, int]]) -> str:
    """The group sub-table shown to the final query; empty values print as ``[Empty Cell]``.

    Example:
        >>> print(group_block("party", [("rep", 2), ("", 1)]), end="")
        /*
        Group the rows according to column: party.
        Group ID | party | Count
        Group 1 | rep | 2
        Group 2 | [Empty Cell] | 1
        */
    """
    lines = ["/*", f"Group the rows according to column: {column}.", f"Group ID | {column} | Count"]
    for i, (value, count) in enumerate(groups, start=1):
        shown = value if value.strip() else "[Empty Cell]"
        lines.append(f"Group {i} | {_cell(shown)} | {count}")
    lines.append("*/")
    return "\n".join(lines) + "\n"


def count_groups(values: Sequence[str]) -> list[tuple[str, int]]:
    """Distinct values with their counts, most frequent first, ties alphabetical (reference).

    Example:
        >>> count_groups(["b", "a", "b", ""])
        [('b', 2), ('', 1), ('a', 1)]
    """
    counts = {v: 0 for v in sorted(set(values))}
    for value in values:
        counts[value] += 1
    return sorted(counts.items(), key=lambda kv: kv[1], reverse=True)


def group_ratio(values: Sequence[str]) -> float | None:
    """Distinct non-empty values over non-empty values; ``None`` when every cell is empty.

    The reference groups a column only when this is at most 0.8 (and crashes on ``None``).

    Example:
        >>> group_ratio(["a", "a", "b", ""])
        0.6666666666666666
    """
    nonempty = [v for v in values if v.strip() != ""]
    if not nonempty:
        return None
    return len(set(nonempty)) / len(nonempty)


def reference_number(cell: str) -> float | None:
    """A number read the reference's way: digits and the first dot, minus if it leads.

    Example:
        >>> reference_number("1,234.5 m"), reference_number("-3"), reference_number("n/a")
        (1234.5, -3.0, None)
    """
    kept: list[str] = []
    dot = False
    for ch in cell:
        if ch.isdigit() and ch.isascii():
            kept.append(ch)
        elif ch == "." and not dot:
            kept.append(ch)
            dot = True
    text = "".join(kept)
    if text in ("", "."):
        return None
    if cell.strip().startswith("-"):
        text = "-" + text
    return float(text)


def is_monotonic(values: Sequence[float] | Sequence[str]) -> bool:
    """Whether the values are already sorted ascending or descending.

    Example:
        >>> is_monotonic([3, 2, 2]), is_monotonic([1, 3, 2])
        (True, False)
    """
    items = list(values)
    return items == sorted(items) or items == sorted(items, reverse=True)  # type: ignore[type-var]


def view_rows(
    rows: Sequence[Sequence[str]], question: str, max_rows: int, head: int = 3
) -> list[int]:
    """0-based positions of at most ``max_rows`` rows to show, in table order.

    All rows when they fit. Otherwise the first ``head`` rows, then the rows that share
    the most words with the question, then the following rows in order.

    Example:
        >>> view_rows([["a"], ["b"], ["c"], ["d"]], "is d there?", max_rows=2, head=1)
        [0, 3]
    """
    if len(rows) <= max_rows:
        return list(range(len(rows)))
    words = {w for w in _WORD.findall(question.lower()) if w not in _STOPWORDS}
    scored: list[tuple[int, int]] = []
    for i, row in enumerate(rows):
        cells = set(_WORD.findall(" ".join(row).lower()))
        score = len(words & cells)
        if score:
            scored.append((-score, i))
    chosen = list(range(min(head, max_rows)))
    for _, i in sorted(scored):
        if len(chosen) >= max_rows:
            break
        if i not in chosen:
            chosen.append(i)
    for i in range(len(rows)):
        if len(chosen) >= max_rows:
            break
        if i not in chosen:
            chosen.append(i)
    return sorted(chosen)
