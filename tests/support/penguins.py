"""A table of our own for the table-agent tests: 344 made-up penguin records, the same every run.

The rows are drawn from a fixed seed (no data set is copied): species, island, bill length,
body mass, sex and year, with a few missing cells as real field records have. The counts
the tests check are computed from the same rows, never written by hand.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path
from typing import Any

from tablereason.table import Table

COLUMNS = ["species", "island", "bill_length_mm", "body_mass_g", "sex", "year"]
ROWS = 344
QUESTION = "how many Adelie?"


def penguin_rows(count: int = ROWS, seed: int = 26) -> list[list[str]]:
    """``count`` records as text cells; every 37th has no body mass, every 53rd no sex."""
    draw = random.Random(seed)
    rows = []
    for index in range(count):
        species = draw.choice(["Adelie", "Adelie", "Gentoo", "Chinstrap"])
        island = draw.choice(["Biscoe", "Dream", "Torgersen"])
        bill = f"{draw.uniform(32.0, 60.0):.1f}"
        mass = "" if index % 37 == 36 else str(draw.randrange(2700, 6300, 25))
        sex = "" if index % 53 == 52 else draw.choice(["female", "male"])
        rows.append([species, island, bill, mass, sex, str(draw.choice([2007, 2008, 2009]))])
    return rows


def adelie_count(rows: list[list[str]] | None = None) -> int:
    """How many of the rows are Adelie penguins (the answer to :data:`QUESTION`)."""
    return sum(1 for row in rows or penguin_rows() if row[0] == "Adelie")


def check_counted_by_both_tools(prediction: Any, table: Table) -> None:
    """A table agent's run over :func:`penguin_table` that counted with SQL, then Python.

    Its answer is the count, its first step the input table, and its two tool steps
    observed the count from the SQL worker and from the sandbox.
    """
    count = adelie_count([list(row) for row in table.rows()])
    assert prediction.error is None, prediction.error
    assert prediction.answer == str(count)
    steps = prediction.trace.steps
    assert steps[0].kind == "input" and steps[0].table is table
    observed = {s.name: s.raw for s in steps if s.kind == "tool"}  # ReWOO's run concurrently
    assert observed == {"SQL": [f"n\n{count}"], "Python": [str(count)]}


def penguin_table(count: int = ROWS) -> Table:
    """The records as a :class:`Table`."""
    return Table.from_records(COLUMNS, penguin_rows(count))


def write_penguins(folder: Path, count: int = ROWS) -> Path:
    """The records as ``penguins.csv`` in ``folder``; its path."""
    path = folder / "penguins.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(penguin_rows(count))
    return path
