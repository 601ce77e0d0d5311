"""Which columns of a wide table fit a terminal at a readable width, and what is hidden.

A terminal table squeezed to its width cuts every cell to a letter or two (``ye…``,
``20…``). :func:`fit_columns` instead gives each column the width its cells need (at
most :data:`MAX_WIDTH`; headers wrap at word breaks) and keeps the columns that fit:
the ones the caller must keep (a column a step just added), then the others from the
left. Width left over is shared among the kept columns, widening each toward its
whole header. :func:`hidden_note` says how many were left out and how to see them.

Example:
    >>> fit = fit_columns(["year", "births", "deaths"], [["1985", "1 104", "301"]], 20)
    >>> fit.shown, fit.hidden
    ([0, 1], [2])
    >>> hidden_note(["deaths"], "see every column with --html PAGE")
    '1 more column not shown (deaths); see every column with --html PAGE'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_WIDTH = 24
"""Widest a column is made for its cells; longer cells wrap."""
MIN_WIDTH = 3
"""Narrowest column."""
COLUMN_COST = 3
"""Characters a column takes beside its cells: the padding on both sides and a border."""
HIDDEN_HINT = "Prediction.to_html() shows every column"
"""What the library says to do to see hidden columns (the command line says ``--html``)."""
NAMED = 6
"""Hidden columns named in the note; the rest are counted."""


@dataclass(frozen=True)
class Fit:
    """The columns to show, with their widths, and the hidden ones (positions)."""

    shown: list[int]
    widths: list[int]
    hidden: list[int]


def column_width(header: str, cells: Sequence[str]) -> int:
    """The width a column needs: its longest cell, or its header's longest word.

    Example:
        >>> column_width("Average population (x 1000)", ["51", "49"])
        10
    """
    longest_cell = max((len(c) for c in cells), default=0)
    longest_word = max((len(w) for w in header.split()), default=0)
    return max(MIN_WIDTH, min(MAX_WIDTH, max(longest_cell, longest_word)))


def fit_columns(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    *,
    keep: Sequence[int] = (),
) -> Fit:
    """The columns that fit ``width`` characters, each at the width it needs.

    Args:
        header: Column names, as they will be shown.
        rows: The rows that will be shown (cells as text).
        width: Characters available for the columns and their borders.
        keep: Positions shown before any other (while they fit).

    Returns:
        A :class:`Fit`: shown positions in table order with their widths, and the hidden
        positions. At least one column is shown.
    """
    needs = [
        column_width(name, [r[i] for r in rows if i < len(r)]) for i, name in enumerate(header)
    ]
    budget = width - 1
    chosen: set[int] = set()
    for index in [k for k in keep if 0 <= k < len(header)]:
        if needs[index] + COLUMN_COST <= budget:
            chosen.add(index)
            budget -= needs[index] + COLUMN_COST
    for index in range(len(header)):
        if index in chosen:
            continue
        if needs[index] + COLUMN_COST > budget:
            break
        chosen.add(index)
        budget -= needs[index] + COLUMN_COST
    if not chosen and header:
        chosen.add(0)
        needs[0] = max(MIN_WIDTH, min(needs[0], width - 1 - COLUMN_COST))
    shown = sorted(chosen)
    widths = [needs[i] for i in shown]
    wants = [max(w, min(MAX_WIDTH, len(header[i]))) for w, i in zip(widths, shown, strict=True)]
    while budget > 0 and widths != wants:  # spare width, shared: toward whole headers
        for position, want in enumerate(wants):
            if budget > 0 and widths[position] < want:
                widths[position] += 1
                budget -= 1
    return Fit(
        shown=shown,
        widths=widths,
        hidden=[i for i in range(len(header)) if i not in chosen],
    )


def hidden_note(names: Sequence[str], hint: str) -> str:
    """The line under a table that hides columns: how many, which, how to see them.

    Example:
        >>> hidden_note([f"c{i}" for i in range(8)], "use a wider terminal")
        '8 more columns not shown (c0, c1, c2, c3, c4, c5, ...); use a wider terminal'
    """
    count = len(names)
    listed = ", ".join(names[:NAMED]) + (", ..." if count > NAMED else "")
    noun = "column" if count == 1 else "columns"
    return f"{count} more {noun} not shown ({listed}); {hint}"
