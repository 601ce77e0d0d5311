"""Questions over large tables for bench_large_tables.py, each with its gold computed in pandas.

A question carries the decisions a model that gets it right would make (the
generated chain, the sort order) and how to read the answer off the final prompt
(``read``). Gold answers are computed here from the CSV with pandas alone, without
tablereason, so the chain's answer is checked against an independent computation.

Tables: four public tables of 1,461 to 8,759 rows shipped offline by the
``vega_datasets`` package (``_data/*.csv``), and a synthetic orders table of any size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

Gold = Callable[[pd.DataFrame], object]
Cites = Callable[[pd.DataFrame, str], set[tuple[int, str]]]
"""The cells an answer rests on, ``(row, column)``, given the frame and the answer."""

REGIONS = ["north", "south", "east", "west", "central", "islands"]
REGION_P = [0.24, 0.22, 0.2, 0.18, 0.1, 0.06]
STATUS = ["shipped", "pending", "returned", "cancelled"]
STATUS_P = [0.8, 0.1, 0.06, 0.04]
PRODUCTS = [
    f"{a} {b}"
    for a in ("red", "blue", "green", "steel", "oak")
    for b in ("chair", "desk", "lamp", "shelf", "stool", "bench")
]


@dataclass(frozen=True)
class Question:
    """One question: its table, text, the right decisions, how to read the answer, gold.

    ``cites`` gives the cells of the table a right answer rests on (for the evidence
    benchmark): a count's rows in the columns that choose them, a sum's summed cells, a
    value's cells that hold it, a group's rows in the grouped column.
    """

    table: str
    text: str
    plan: str
    read: tuple[str, ...]
    gold: Gold
    sort: str | None = None
    cites: Cites | None = None


def vega_csv(name: str) -> Path:
    """The path of one of the CSV files ``vega_datasets`` ships."""
    import vega_datasets

    return Path(vega_datasets.__file__).parent / "_data" / f"{name}.csv"


def orders(n: int, seed: int = 0) -> pd.DataFrame:
    """A synthetic orders table of ``n`` rows; every column is text, as in a CSV.

    The same seed gives the same distribution at every size (rows are drawn
    independently), so views of 10,000 and 1,000,000 rows describe alike tables.
    """
    rng = np.random.default_rng(seed)
    days = rng.integers(0, 3652, n)
    dates = (np.datetime64("2015-01-01") + days.astype("timedelta64[D]")).astype(str)
    return pd.DataFrame(
        {
            "order_id": np.char.mod("A%07d", np.arange(1, n + 1)),
            "order_date": dates,
            "region": rng.choice(REGIONS, n, p=REGION_P),
            "product": rng.choice(PRODUCTS, n),
            "units": rng.integers(1, 51, n).astype(str),
            "price": np.char.mod("%.2f", np.round(rng.uniform(1, 500, n), 2)),
            "status": rng.choice(STATUS, n, p=STATUS_P),
        }
    )


def num(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(frame[column].str.replace(",", ""), errors="coerce")


def when(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_datetime(frame[column].str.replace("/", "-"), errors="coerce")


def count(mask: pd.Series) -> int:
    return int(mask.sum())


def top(series: pd.Series) -> str:
    """The most frequent value; ties go to the alphabetically first (as group_by orders)."""
    counts = series.value_counts()
    best = counts.max()
    return str(sorted(counts[counts == best].index)[0])


def first_of(frame: pd.DataFrame, by: pd.Series, column: str, largest: bool) -> set[str]:
    """The ``column`` values of every row where ``by`` takes its extreme value."""
    extreme = by.max() if largest else by.min()
    return set(frame.loc[by == extreme, column])


def everything(f: pd.DataFrame) -> pd.Series:
    return pd.Series(True, index=f.index)


def rows_of(mask: Callable[[pd.DataFrame], pd.Series], *columns: str) -> Cites:
    """The cells of ``columns`` in the rows ``mask`` keeps (a count's or a sum's cells)."""
    return lambda f, _: {(int(i), c) for i in np.flatnonzero(mask(f).to_numpy()) for c in columns}


def holding(
    mask: Callable[[pd.DataFrame], pd.Series],
    column: str,
    value: Callable[[pd.DataFrame], pd.Series] | None = None,
) -> Cites:
    """The ``column`` cells of the kept rows whose ``value`` (default: the cell) is the answer."""

    def cells(f: pd.DataFrame, answer: str) -> set[tuple[int, str]]:
        read = (value(f) if value else f[column]).astype(str)
        return {(int(i), column) for i in np.flatnonzero((mask(f) & (read == answer)).to_numpy())}

    return cells


def extreme(mask: Callable[[pd.DataFrame], pd.Series], column: str, largest: bool) -> Cites:
    """The cells of ``column`` in the kept rows where it is largest (or smallest)."""

    def cells(f: pd.DataFrame, _: str) -> set[tuple[int, str]]:
        values = num(f, column).where(mask(f))
        best = values.max() if largest else values.min()
        return {(int(i), column) for i in np.flatnonzero((values == best).to_numpy())}

    return cells


def extreme_holding(by: str, column: str, largest: bool) -> Cites:
    """The ``column`` cells holding the answer in the rows where ``by`` is extreme."""

    def cells(f: pd.DataFrame, answer: str) -> set[tuple[int, str]]:
        values = num(f, by)
        best = values.max() if largest else values.min()
        keep = (values == best) & (f[column].astype(str) == answer)
        return {(int(i), column) for i in np.flatnonzero(keep.to_numpy())}

    return cells


def _weather() -> list[Question]:
    t = "seattle-weather"

    def year(f: pd.DataFrame) -> pd.Series:
        return when(f, "date").dt.year

    return [
        Question(t, "how many days had snow?", " f_select_row(where weather = 'snow') -> <END>",
                 ("count",), lambda f: count(f.weather == "snow"),
                 cites=rows_of(lambda f: f.weather == "snow", "weather")),
        Question(t, "how many days had rain?", " f_select_row(where weather = 'rain') -> <END>",
                 ("count",), lambda f: count(f.weather == "rain"),
                 cites=rows_of(lambda f: f.weather == "rain", "weather")),
        Question(t, "which weather was the most common?", " f_group_column(weather) -> <END>",
                 ("top_group",), lambda f: top(f.weather),
                 cites=holding(everything, "weather")),
        Question(t, "how many days were foggy?", " f_group_column(weather) -> <END>",
                 ("group_count", "fog"), lambda f: count(f.weather == "fog"),
                 cites=rows_of(lambda f: f.weather == "fog", "weather")),
        Question(t, "what was the highest temp_max?",
                 " f_select_column(date, temp_max) -> <END>", ("max", "temp_max"),
                 lambda f: num(f, "temp_max").max(),
                 cites=extreme(everything, "temp_max", True)),
        Question(t, "what was the lowest temp_min?",
                 " f_select_column(date, temp_min) -> <END>", ("min", "temp_min"),
                 lambda f: num(f, "temp_min").min(),
                 cites=extreme(everything, "temp_min", False)),
        Question(t, "what was the total precipitation in 2012?",
                 " f_add_column(year = year(date)) -> f_select_row(where year = 2012) -> <END>",
                 ("sum", "precipitation"),
                 lambda f: num(f, "precipitation")[year(f) == 2012].sum(),
                 cites=rows_of(lambda f: year(f) == 2012, "precipitation")),
        Question(t, "how many days in 2015 had a temp_max above 30?",
                 " f_select_row(where year(date) = 2015 AND temp_max > 30) -> <END>", ("count",),
                 lambda f: count((year(f) == 2015) & (num(f, "temp_max") > 30)),
                 cites=rows_of(lambda f: (year(f) == 2015) & (num(f, "temp_max") > 30), "date",
                               "temp_max")),
        Question(t, "on which day was the wind strongest?", " f_sort_column(wind) -> <END>",
                 ("cell", "date"), lambda f: first_of(f, num(f, "wind"), "date", True),
                 sort='wind), the order is "large to small".',
                 cites=extreme_holding("wind", "date", True)),
        Question(t, "what was the total precipitation on snow days?",
                 " f_select_row(where weather = 'snow') -> <END>", ("sum", "precipitation"),
                 lambda f: num(f, "precipitation")[f.weather == "snow"].sum(),
                 cites=rows_of(lambda f: f.weather == "snow", "precipitation")),
        Question(t, "how many days had more than 20 mm of precipitation?",
                 " f_select_row(where precipitation > 20) -> <END>", ("count",),
                 lambda f: count(num(f, "precipitation") > 20),
                 cites=rows_of(lambda f: num(f, "precipitation") > 20, "precipitation")),
        Question(t, "how many days with drizzle were there in 2013?",
                 " f_add_column(year = year(date)) -> f_select_row(where year = 2013 AND "
                 "weather = 'drizzle') -> <END>", ("count",),
                 lambda f: count((year(f) == 2013) & (f.weather == "drizzle")),
                 cites=rows_of(lambda f: (year(f) == 2013) & (f.weather == "drizzle"), "date",
                               "weather")),
        Question(t, "which year had the most rainy days?",
                 " f_add_column(year = year(date)) -> f_select_row(where weather = 'rain') -> "
                 "f_group_column(year) -> <END>", ("top_group",),
                 lambda f: top(year(f)[f.weather == "rain"].astype(str)),
                 cites=holding(lambda f: f.weather == "rain", "date", year)),
        Question(t, "how many days had a temp_min below 0?",
                 " f_select_row(where temp_min < 0) -> <END>", ("count",),
                 lambda f: count(num(f, "temp_min") < 0),
                 cites=rows_of(lambda f: num(f, "temp_min") < 0, "temp_min")),
        Question(t, "what was the highest wind speed on a rainy day?",
                 " f_select_row(where weather = 'rain') -> <END>", ("max", "wind"),
                 lambda f: num(f, "wind")[f.weather == "rain"].max(),
                 cites=extreme(lambda f: f.weather == "rain", "wind", True)),
        Question(t, "what was the total precipitation in december 2014?",
                 " f_select_row(where year(date) = 2014 AND month(date) = 12) -> <END>",
                 ("sum", "precipitation"),
                 lambda f: num(f, "precipitation")[
                     (year(f) == 2014) & (when(f, "date").dt.month == 12)].sum(),
                 cites=rows_of(lambda f: (year(f) == 2014) & (when(f, "date").dt.month == 12),
                               "precipitation")),
    ]  # fmt: skip


def _airports() -> list[Question]:
    t = "airports"

    def municipal(f: pd.DataFrame) -> pd.Series:
        return f.name.str.lower().str.contains("municipal", regex=False)
    return [
        Question(t, "how many airports are in alaska?",
                 " f_select_row(where state = 'AK') -> <END>", ("count",),
                 lambda f: count(f.state == "AK"),
                 cites=rows_of(lambda f: f.state == "AK", "state")),
        Question(t, "which state has the most airports?", " f_group_column(state) -> <END>",
                 ("top_group",), lambda f: top(f.state),
                 cites=holding(everything, "state")),
        Question(t, "how many airports does texas have?", " f_group_column(state) -> <END>",
                 ("group_count", "TX"), lambda f: count(f.state == "TX"),
                 cites=rows_of(lambda f: f.state == "TX", "state")),
        Question(t, "what is the largest latitude of an airport?",
                 " f_select_column(name, latitude) -> <END>", ("max", "latitude"),
                 lambda f: num(f, "latitude").max(),
                 cites=extreme(everything, "latitude", True)),
        Question(t, "which airport is the farthest west?", " f_sort_column(longitude) -> <END>",
                 ("cell", "name"), lambda f: first_of(f, num(f, "longitude"), "name", False),
                 sort='longitude), the order is "small to large".',
                 cites=extreme_holding("longitude", "name", False)),
        Question(t, "how many airports are in chicago?", " f_select_row(where city = 'Chicago') "
                 "-> <END>", ("count",), lambda f: count(f.city == "Chicago"),
                 cites=rows_of(lambda f: f.city == "Chicago", "city")),
        Question(t, "how many airports are outside the usa?",
                 " f_select_row(where country <> 'USA') -> <END>", ("count",),
                 lambda f: count(f.country != "USA"),
                 cites=rows_of(lambda f: f.country != "USA", "country")),
        Question(t, "how many airports in california are south of latitude 34?",
                 " f_select_row(where state = 'CA' AND latitude < 34) -> <END>", ("count",),
                 lambda f: count((f.state == "CA") & (num(f, "latitude") < 34)),
                 cites=rows_of(lambda f: (f.state == "CA") & (num(f, "latitude") < 34), "state",
                               "latitude")),
        Question(t, "which state has the most municipal airports?",
                 " f_select_row(where name ILIKE '%municipal%') -> f_group_column(state) -> <END>",
                 ("top_group",),
                 lambda f: top(f.state[f.name.str.lower().str.contains("municipal", regex=False)]),
                 cites=holding(municipal, "state")),
        Question(t, "how many airports have municipal in their name?",
                 " f_select_row(where name ILIKE '%municipal%') -> <END>", ("count",),
                 lambda f: count(f.name.str.lower().str.contains("municipal", regex=False)),
                 cites=rows_of(municipal, "name")),
        Question(t, "how many airports are in new york state?",
                 " f_select_row(where state = 'NY') -> <END>", ("count",),
                 lambda f: count(f.state == "NY"),
                 cites=rows_of(lambda f: f.state == "NY", "state")),
        Question(t, "what is the smallest latitude of an airport in hawaii?",
                 " f_select_row(where state = 'HI') -> <END>", ("min", "latitude"),
                 lambda f: num(f, "latitude")[f.state == "HI"].min(),
                 cites=extreme(lambda f: f.state == "HI", "latitude", False)),
    ]  # fmt: skip


def _temps(t: str) -> list[Question]:
    def month(f: pd.DataFrame) -> pd.Series:
        return when(f, "date").dt.month

    return [
        Question(t, "how many hours were above 70 degrees?",
                 " f_select_row(where temp > 70) -> <END>", ("count",),
                 lambda f: count(num(f, "temp") > 70),
                 cites=rows_of(lambda f: num(f, "temp") > 70, "temp")),
        Question(t, "what was the highest temperature?", " f_select_column(date, temp) -> <END>",
                 ("max", "temp"), lambda f: num(f, "temp").max(),
                 cites=extreme(everything, "temp", True)),
        Question(t, "what was the lowest temperature?", " f_select_column(date, temp) -> <END>",
                 ("min", "temp"), lambda f: num(f, "temp").min(),
                 cites=extreme(everything, "temp", False)),
        Question(t, "how many hours in july were below 60 degrees?",
                 " f_add_column(month = month(date)) -> f_select_row(where month = 7 AND "
                 "temp < 60) -> <END>", ("count",),
                 lambda f: count((month(f) == 7) & (num(f, "temp") < 60)),
                 cites=rows_of(lambda f: (month(f) == 7) & (num(f, "temp") < 60), "date", "temp")),
        Question(t, "which month had the most hours above 65 degrees?",
                 " f_add_column(month = month(date)) -> f_select_row(where temp > 65) -> "
                 "f_group_column(month) -> <END>", ("top_group",),
                 lambda f: top(month(f)[num(f, "temp") > 65].astype(str)),
                 cites=holding(lambda f: num(f, "temp") > 65, "date", month)),
        Question(t, "when was the lowest temperature recorded?", " f_sort_column(temp) -> <END>",
                 ("cell", "date"), lambda f: first_of(f, num(f, "temp"), "date", False),
                 sort='temp), the order is "small to large".',
                 cites=extreme_holding("temp", "date", False)),
        Question(t, "how many hours were exactly 50 degrees?",
                 " f_select_row(where temp = 50) -> <END>", ("count",),
                 lambda f: count(num(f, "temp") == 50),
                 cites=rows_of(lambda f: num(f, "temp") == 50, "temp")),
    ]  # fmt: skip


def synthetic() -> list[Question]:
    """Questions over :func:`orders` (any size)."""
    t = "orders"

    def year(f: pd.DataFrame) -> pd.Series:
        return pd.to_datetime(f.order_date).dt.year

    return [
        Question(t, "how many orders were returned?",
                 " f_select_row(where status = 'returned') -> <END>", ("count",),
                 lambda f: count(f.status == "returned"),
                 cites=rows_of(lambda f: f.status == "returned", "status")),
        Question(t, "which region has the most orders?", " f_group_column(region) -> <END>",
                 ("top_group",), lambda f: top(f.region),
                 cites=holding(everything, "region")),
        Question(t, "how many orders came from the islands region?",
                 " f_group_column(region) -> <END>", ("group_count", "islands"),
                 lambda f: count(f.region == "islands"),
                 cites=rows_of(lambda f: f.region == "islands", "region")),
        Question(t, "what is the highest price of a cancelled order?",
                 " f_select_row(where status = 'cancelled') -> <END>", ("max", "price"),
                 lambda f: num(f, "price")[f.status == "cancelled"].max(),
                 cites=extreme(lambda f: f.status == "cancelled", "price", True)),
        Question(t, "how many units were sold in the north region?",
                 " f_select_row(where region = 'north') -> <END>", ("sum", "units"),
                 lambda f: num(f, "units")[f.region == "north"].sum(),
                 cites=rows_of(lambda f: f.region == "north", "units")),
        Question(t, "how many orders in 2019 came from the islands region?",
                 " f_add_column(year = year(order_date)) -> f_select_row(where year = 2019 AND "
                 "region = 'islands') -> <END>", ("count",),
                 lambda f: count((year(f) == 2019) & (f.region == "islands")),
                 cites=rows_of(lambda f: (year(f) == 2019) & (f.region == "islands"), "order_date",
                               "region")),
        Question(t, "which product had the most pending orders?",
                 " f_select_row(where status = 'pending') -> f_group_column(product) -> <END>",
                 ("top_group",), lambda f: top(f["product"][f.status == "pending"]),
                 cites=holding(lambda f: f.status == "pending", "product")),
        Question(t, "what was the total price of orders of more than 45 units in 2020?",
                 " f_select_row(where units > 45 AND year(order_date) = 2020) -> <END>",
                 ("sum", "price"),
                 lambda f: num(f, "price")[(num(f, "units") > 45) & (year(f) == 2020)].sum(),
                 cites=rows_of(lambda f: (num(f, "units") > 45) & (year(f) == 2020), "price")),
        Question(t, "what is the lowest price?", " f_select_column(order_id, price) -> <END>",
                 ("min", "price"), lambda f: num(f, "price").min(),
                 cites=extreme(everything, "price", False)),
    ]  # fmt: skip


def public() -> list[Question]:
    """Questions over the four vega_datasets tables of 1,000 to 10,000 rows."""
    return _weather() + _airports() + _temps("seattle-temps") + _temps("sf-temps")
