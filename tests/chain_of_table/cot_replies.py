"""Random but plausible model replies for every Chain-of-Table call site.

``ReplyScript(seed, header, rows)`` answers ``(site, n, index)`` deterministically, so
two implementations that take the same decisions receive the same replies.
"""

from __future__ import annotations

import random
from collections import defaultdict

from tablereason.llm.base import Request

OPS = ["add_column", "select_row", "select_column", "group_column", "sort_column"]
JUNK = ["", "I am not sure.", "f_", "->", "row", "The answer is : f_row([", "f_col([])"]


class ReplyScript:
    """Deterministic replies as a function of (seed, call site, call index)."""

    def __init__(self, seed: int, header: list[str], rows: list[list[str]]) -> None:
        self.seed, self.header, self.rows = seed, header, rows

    def texts(self, site: str, n: int, index: int) -> list[str]:
        rng = random.Random(f"{self.seed}/{site}/{index}")
        return [self._one(rng, site, index) for _ in range(n)]

    def _cell_part(self, rng: random.Random, row: list[str], col: int) -> str:
        cell = row[col] if col < len(row) else ""
        words = cell.split()
        # One extraction style per script, so whole columns are sometimes consistent.
        mode = random.Random(f"{self.seed}/mode").choice(["cell", "first", "first", "mixed"])
        if mode == "cell":
            return cell
        if mode == "first":
            return words[0] if words else ""
        return rng.choice([cell, words[0] if words else "", cell.upper(), "x"])

    def _one(self, rng: random.Random, site: str, index: int) -> str:
        header, rows = self.header, self.rows
        if rng.random() < 0.1:
            return rng.choice(JUNK)
        if site == "plan":
            names = rng.sample(OPS, rng.randint(0, 4)) + (["<END>"] if rng.random() < 0.7 else [])
            return " " + " -> ".join(n if n == "<END>" else f"f_{n}(x)" for n in names)
        if site == "select_row":
            if rng.random() < 0.15:
                return "explain : all. The answer is : f_row([" + _pad(rng, "*") + "])"
            # row 0 is the reference's header row (a documented departure)
            picked = rng.sample(range(0, len(rows) + 3), rng.randint(1, min(3, len(rows) + 2)))
            items = [rng.choice(["row {}", "row {}", "row  {}", "{}"]).format(r) for r in picked]
            return "The answer is : f_row([" + _join(rng, items) + "])"
        if site == "select_column":
            names = rng.sample([*header, "nope", header[0].upper()], rng.randint(1, 3))
            return "The answer is : f_col([" + _join(rng, names) + "])"
        if site == "group_column":
            group = _pad(rng, rng.choice([*header, "nope"]))
            return f"Therefore, the answer is: f_group({group})."
        if site == "sort_column":
            return self._sort(rng)
        if site == "add_column":
            col = random.Random(f"{self.seed}/column").randrange(len(header))
            if index > 0:  # a per-row call
                return " " + self._cell_part(rng, rows[min(index + 2, len(rows) - 1)], col)
            name = rng.choice(["year", "number of wins", header[0], "part", "", " part "])
            values = [self._cell_part(rng, r, col) for r in rows[:3]]
            if rng.random() < 0.1:
                values = values[:2]
            return (
                f'We extract the value from column "{header[col]}" and create a different column '
                f'"{name}" for each row. The datatype is String.\n'
                f"Therefore, the answer is: f_add_column({name}). The value: {' | '.join(values)}"
            )
        return rng.choice(["YES", "no", "True", "false", "maybe"])

    def _sort(self, rng: random.Random) -> str:
        """A sort reply; sometimes with padded captures, line breaks or a later ``)``."""
        dtype = rng.choice(["Numerical", "Numerical", "String", "DateType"])
        order = _pad(rng, rng.choice(["large to small", "small to large", "up"]))
        column = _pad(rng, rng.choice([*self.header, "nope"]))
        # DOTALL: the datatype may end in a line break, the order and column may span lines
        end = rng.choice([".", ".", "\n", ".\n"])
        gap = rng.choice([" ", " ", "\n", "\nTherefore "])
        text = (
            f"The datatype is {dtype}{end}Therefore, the answer is:{gap}"
            f'f_sort({column}),{gap}the order is "{order}".'
        )
        if rng.random() < 0.1:
            text += rng.choice(["\n(see above).", ' or "small to large".'])
        return text


def _pad(rng: random.Random, text: str) -> str:
    """The text, sometimes with spaces or a line break around it."""
    return rng.choice(["{}", "{}", "{}", " {} ", "{} ", "\n{}"]).format(text)


def _join(rng: random.Random, items: list[str]) -> str:
    """A list body: ``", "``-joined, sometimes padded, with a trailing separator or a break."""
    sep = rng.choice([", ", ", ", ", ", ",", ",\n"])
    body = sep.join(items) + rng.choice(["", "", "", ", ", ",", " "])
    return _pad(rng, body)


class Counter:
    """Feeds one implementation: counts calls per site and asks the script."""

    def __init__(self, script: ReplyScript) -> None:
        self.script = script
        self.calls: dict[str, int] = defaultdict(int)

    def reply(self, site: str, n: int) -> list[str]:
        index = self.calls[site]
        self.calls[site] += 1
        return self.script.texts(site, n, index)

    def for_request(self, request: Request) -> list[str]:
        site = request.call_site.rsplit("/", 1)[-1]
        return self.reply(site, request.n)
