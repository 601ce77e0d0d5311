"""Questions of our own over small public tables, for the embedded model's answer checks.

The tables are the small datasets the ``vega_datasets`` package ships (no network):
Burtin's antibiotics, Nightingale's Crimean war deaths, Playfair's wheat prices, the
driving and gas prices series, Iowa's electricity sources, Fisher's barley trials,
the cars data set and Anscombe's quartet. Each table is read as text, as a CSV user
would get it; each gold answer is computed here with pandas alone (a set when ties
make several answers right), never with tablereason.

Example:
    >>> len(questions()) >= 20
    True
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

Gold = Callable[[pd.DataFrame], object]


@dataclass(frozen=True)
class Question:
    """One question over one table, with its gold answer."""

    table: str
    text: str
    gold: Gold


def frame(name: str) -> pd.DataFrame:
    """A vega_datasets table as text cells (JSON values as written, CSV cells as they are)."""
    import vega_datasets

    path = Path(vega_datasets.__file__).parent / "_data" / name
    if name.endswith(".csv"):
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    records = json.loads(path.read_text(encoding="utf-8"))
    return pd.DataFrame([{k: "" if v is None else str(v) for k, v in r.items()} for r in records])


def num(f: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(f[column], errors="coerce")


def at_extreme(f: pd.DataFrame, by: str, column: str, largest: bool) -> set[str]:
    """The ``column`` values of the rows where ``by`` is largest (or smallest)."""
    values = num(f, by)
    extreme = values.max() if largest else values.min()
    return set(f.loc[values == extreme, column])


def count(mask: pd.Series) -> int:
    return int(mask.sum())


def questions() -> list[Question]:
    """The questions: values of the table, and counts."""
    b, c, w, d = "burtin.json", "crimea.json", "wheat.json", "driving.json"
    i, y, k, a = "iowa-electricity.csv", "barley.json", "cars.json", "anscombe.json"
    return [
        Question(b, "which bacteria has the highest penicillin value?",
                 lambda f: at_extreme(f, "Penicillin", "Bacteria", True)),
        Question(b, "how many bacteria are gram negative?",
                 lambda f: count(f.Gram_Staining == "negative")),
        Question(b, "what is the genus of brucella abortus?",
                 lambda f: set(f.Genus[f.Bacteria == "Brucella abortus"])),
        Question(b, "which bacteria has the lowest neomycin value?",
                 lambda f: at_extreme(f, "Neomycin", "Bacteria", False)),
        Question(c, "in which month were the most deaths from disease?",
                 lambda f: at_extreme(f, "disease", "date", True)),
        Question(c, "how many months had more than 100 deaths from wounds?",
                 lambda f: count(num(f, "wounds") > 100)),
        Question(c, "how many deaths from disease were there in 1855-01-01?",
                 lambda f: set(f.disease[f.date == "1855-01-01"])),
        Question(w, "in which year was the wheat price highest?",
                 lambda f: at_extreme(f, "wheat", "year", True)),
        Question(w, "what were the wages in 1800?", lambda f: set(f.wages[f.year == "1800"])),
        Question(w, "how many years had a wheat price above 50?",
                 lambda f: count(num(f, "wheat") > 50)),
        Question(d, "in which year were the most miles driven?",
                 lambda f: at_extreme(f, "miles", "year", True)),
        Question(d, "what was the gas price in 1980?", lambda f: set(f.gas[f.year == "1980"])),
        Question(d, "how many years had a gas price above 2?",
                 lambda f: count(num(f, "gas") > 2)),
        Question(i, "which source generated the most electricity in 2017?",
                 lambda f: at_extreme(f[f.year == "2017-01-01"], "net_generation", "source",
                                      True)),
        Question(i, "how many rows are about nuclear energy?",
                 lambda f: count(f.source == "Nuclear Energy")),
        Question(y, "which site had the highest yield?",
                 lambda f: at_extreme(f, "yield", "site", True)),
        Question(y, "how many rows are from 1931?", lambda f: count(f.year == "1931")),
        Question(y, "which variety had the lowest yield at duluth in 1932?",
                 lambda f: at_extreme(f[(f.site == "Duluth") & (f.year == "1932")], "yield",
                                      "variety", False)),
        Question(k, "which car has the highest horsepower?",
                 lambda f: at_extreme(f, "Horsepower", "Name", True)),
        Question(k, "how many cars have 8 cylinders?", lambda f: count(f.Cylinders == "8")),
        Question(k, "what is the origin of the ford pinto?",
                 lambda f: set(f.Origin[f.Name == "ford pinto"])),
        Question(a, "what is the largest y in series ii?",
                 lambda f: at_extreme(f[f.Series == "II"], "Y", "Y", True)),
    ]  # fmt: skip
