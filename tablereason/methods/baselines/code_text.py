"""Text the two baselines share: column names as the code sees them, questions, answers."""

from __future__ import annotations

from typing import Any

SQL_START = "SELECT"
"""The prompt's last word: the model continues the query from there."""
SQL_STOP = (";", "\n\n", "\nQuestion:", "\nError:", "\nThis query failed:")
PROGRAM_STOP = ("\n```",)
FEEDBACK_CHARS = 300
"""The most characters of a failure a repair prompt repeats."""


def code_column_names(columns: list[str]) -> list[str]:
    r"""The names the table's columns have in the code: as the prompt shows them, and unique.

    Both baselines use them: the SQL table ``t`` and the DataFrame ``df`` carry them, and
    Text-to-SQL lists them under the table.

    Line breaks become spaces (as in the table text), an empty name becomes
    ``column <i>``, and a repeated name gets `` (2)``, `` (3)``, ...

    Example:
        >>> code_column_names(["Water level\ncm", "Year", "Year", ""])
        ['Water level cm', 'Year', 'Year (2)', 'column 4']
    """
    names: list[str] = []
    seen: set[str] = set()
    for index, column in enumerate(columns, start=1):
        base = " ".join(column.split()) or f"column {index}"
        name, count = base, 1
        while name in seen:
            count += 1
            name = f"{base} ({count})"
        seen.add(name)
        names.append(name)
    return names


def one_line(text: str, limit: int = FEEDBACK_CHARS) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def answer_text(value: Any) -> str | list[str]:
    """A program's or query's value as the answer text (whole floats without ``.0``)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return [str(answer_text(v)) for v in value]
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def verdict_text(value: Any) -> str | list[str]:
    """A TabFact program's value as a verdict: ``yes`` for true, ``no`` for false.

    Booleans, ``"True"``/``"False"``, ``"yes"``/``"no"`` (any case) and a one-item list
    of them are read; any other value is the answer text as it is.

    Example:
        >>> verdict_text(True), verdict_text("false"), verdict_text(["Yes"]), verdict_text(3)
        ('yes', 'no', 'yes', '3')
    """
    one = value[0] if isinstance(value, list) and len(value) == 1 else value
    if isinstance(one, bool):
        return "yes" if one else "no"
    if isinstance(one, str):
        word = one.strip().lower()
        if word in ("true", "yes"):
            return "yes"
        if word in ("false", "no"):
            return "no"
    return answer_text(value)


def question_text(question: str, unit: str | None, choices: list[str] | None) -> str:
    """The question as the prompts show it, with TabMWP's unit and choices."""
    text = question
    if unit:
        text += f" (Unit: {unit})"
    if choices:
        text += f" Please select from the following options: {choices}."
    return text
