"""What a question asks for, read from its words: a count, a value of the table, or neither.

The answer checks need only two facts about a question: whether it asks how many
(:func:`asks_count`), and whether it asks for a value the table holds (which team,
what year, who: :func:`asks_value`), rather than a total, a difference or a verdict.

Example:
    >>> asks_count("How many days had snow?"), asks_value("which team won the most games?")
    (True, True)
    >>> asks_value("what was the total precipitation in 2012?")
    False
"""

from __future__ import annotations

import re

_COUNT = re.compile(r"\b(how many|number of|count of|total number)\b", re.I)
_WH = re.compile(r"\b(which|who|whom|whose|what|where|when)\b", re.I)
_AGGREGATE = re.compile(
    r"\b(how many|how much|number of|count|total|sum|average|mean|difference|combined|"
    r"altogether|percent|percentage|ratio|more than|less than|fewer than|longer than|"
    r"shorter than|compared)\b",
    re.I,
)
_WORD = re.compile(r"[^\W_]+")


def asks_count(question: str) -> bool:
    """Whether the question asks how many (rows, times, days...).

    Example:
        >>> asks_count("what is the number of wins?"), asks_count("who won?")
        (True, False)
    """
    return _COUNT.search(question) is not None


def asks_value(question: str) -> bool:
    """Whether the question asks for a value of the table (which, who, what, where, when).

    A question that asks for a count, a total, an average or a comparison asks for
    something computed, not for a value the table holds.

    Example:
        >>> asks_value("who was the first to finish?"), asks_value("is 1998 listed?")
        (True, False)
    """
    return _WH.search(question) is not None and _AGGREGATE.search(question) is None


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (letters and digits).

    Example:
        >>> words("Chinstrap penguins, on Dream!")
        ['chinstrap', 'penguins', 'on', 'dream']
    """
    return [w.casefold() for w in _WORD.findall(text)]


def mentions(text: str, phrase: str) -> bool:
    """Whether ``text`` contains the words of ``phrase`` in a row (ignoring case, punctuation).

    Example:
        >>> mentions("where do chinstrap penguins live?", "Chinstrap"), mentions("a b", "")
        (True, False)
    """
    wanted = words(phrase)
    if not wanted:
        return False
    have = words(text)
    return any(have[i : i + len(wanted)] == wanted for i in range(len(have) - len(wanted) + 1))
