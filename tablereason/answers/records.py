"""The records of a checked answer: its evidence and its warnings, as plain data.

They hold no table and import no engine, so a saved prediction reads back without
DuckDB; :mod:`tablereason.answers.evidence` and :mod:`tablereason.answers.checks`
compute them.

Example:
    >>> Evidence(status="found", cells=[EvidenceCell(row=0, column="a", value="1")]).total
    0
    >>> AnswerWarning(code="sentence", message="...").code in WARNING_CODES
    True
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EVIDENCE_LIMIT = 50
"""Evidence cells listed with their values (all are counted)."""

Kind = Literal["equal", "group", "count", "sum", "mean", "query", "match"]
KIND_TEXT: dict[str, str] = {
    "equal": "the cells of the final table that equal the answer",
    "group": "the rows of the group the answer names or counts",
    "count": "the rows the count counts, by the cells that kept them",
    "sum": "the cells the sum adds up",
    "mean": "the cells the average is taken over",
    "query": "the input rows behind the query's result, carried through it as row numbers",
    "match": "the input cells equal to the answer (a program's steps are not traced)",
}
"""What each kind of evidence is, as the evidence's ``how`` says it."""


class EvidenceCell(BaseModel):
    """One input-table cell: its row position (0-based), column name and text."""

    model_config = ConfigDict(frozen=True)

    row: int
    column: str
    value: str


class Evidence(BaseModel):
    """The input-table cells an answer rests on (see module notes).

    Attributes:
        status: ``found``; ``none`` when nothing in the table explains the answer;
            ``not_available`` when it cannot be computed (``how`` says why).
        basis: ``lineage`` (followed through the chain), ``query`` (row numbers
            carried through a query), ``match`` (cells equal to the answer, not traced)
            or ``none``.
        how: One sentence: what the cells are, or why there are none.
        cells: The first :data:`EVIDENCE_LIMIT` cells, by row then column.
        total: How many cells there are in all.
        untraced: Why some cells map to no input cell (values a model gave).
        marks: Per trace step index, the ``(row, column)`` cells of its table to highlight.
    """

    model_config = ConfigDict(frozen=True)

    status: Literal["found", "none", "not_available"]
    basis: Literal["lineage", "query", "match", "none"] = "none"
    how: str = ""
    cells: list[EvidenceCell] = Field(default_factory=list)
    total: int = 0
    untraced: list[str] = Field(default_factory=list)
    marks: dict[int, list[tuple[int, str]]] = Field(default_factory=dict)


WARNING_CODES: dict[str, str] = {
    "empty_table": "the answer came from a table with no rows",
    "no_match": "a condition of the chain matched no row",
    "not_in_table": "the question asks for a value of the table, and the answer is none",
    "whole_row": "the answer is a whole row, not a value",
    "sentence": "the answer is a sentence, not a value",
    "chain_error": "the run stopped on an error",
    "count_mismatch": "a count answer differs from the number of rows it rests on",
}
"""Every warning code and what it means."""


class AnswerWarning(BaseModel):
    """One warning: its code (a key of :data:`WARNING_CODES`) and a sentence about this run."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
