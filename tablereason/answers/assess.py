"""Assessing a prediction: its typed value, its evidence and its warnings, for any method.

:func:`assess` reads only what every method records: the answer and error of the
:class:`~tablereason.trace.Prediction` and its trace, whose first table is the input
and whose last table is the one the answer was read from (with its lineage), plus
two hints some methods leave in their steps: a group step's groups (``arguments
["group"]`` of the answer step) and Text-to-SQL's row numbers (``arguments
["source_rows"]`` of its query step). ``source``, when given, is the table the user
passed: a method that answered over a copy of it (lower-cased, say) still cites the
user's cells.

Example:
    >>> from tablereason.table import Table
    >>> from tablereason.trace import Prediction, Trace, TraceStep
    >>> t = Table.from_records(["year", "births"], [["1980", "996"], ["1985", "1 104"]])
    >>> trace = Trace(question="what year had 1 104 births?",
    ...               steps=[TraceStep(kind="input", name="table", table=t)])
    >>> a = assess(Prediction(answer=["1985."], trace=trace))
    >>> a.value.value, [(c.row, c.column) for c in a.evidence.cells], a.warnings
    (1985, [(1, 'year')], [])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from tablereason.answers.cells import TableCells
from tablereason.answers.checks import AnswerWarning, Checked, warnings_for
from tablereason.answers.evidence import Found, RunTables, find_evidence
from tablereason.answers.normalise import normalise_answer, normalise_item
from tablereason.answers.records import Evidence, EvidenceCell
from tablereason.answers.value import AnswerValue, typed
from tablereason.errors import TableReasonError

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table
    from tablereason.trace.record import Prediction, Trace


@dataclass(frozen=True)
class Assessment:
    """A prediction's typed value, evidence and warnings."""

    value: AnswerValue
    evidence: Evidence
    warnings: list[AnswerWarning]
    positions: dict[str, np.ndarray] = field(default_factory=dict)
    """Every cited input cell, row positions per column (the evidence lists the first)."""


def assess(prediction: Prediction, source: Table | None = None) -> Assessment:
    """The value, evidence and warnings of ``prediction`` (see module notes).

    Args:
        prediction: A method's prediction, with its trace.
        source: The table the user passed, when the run read a copy of it.
    """
    trace = prediction.trace
    run = run_tables(trace)
    answer = prediction.answer
    raw = [answer] if isinstance(answer, str) else [str(a) for a in answer]
    raw = [r for r in raw if r.strip()]
    try:
        cells = TableCells(run.final) if run.final is not None else None
        items = normalise_answer(raw, cells, run.question)
        found = find_evidence(run, items)
    except (TableReasonError, duckdb.Error) as error:  # the answer stands; say why not
        items = [normalise_item(r, None, run.question) for r in raw]
        reason = f"not available: the evidence could not be computed ({error})"
        found = Found(Evidence(status="not_available", how=reason), [None] * len(items), {})
    evidence, kinds = found.evidence, found.kinds
    if source is not None and run.source is not None and source is not run.source:
        evidence = _in_source(evidence, run.source, source)
    notes = [note for item in items for note in item.notes]
    value = typed([i.text for i in items], notes)
    stopped = next((s.error for s in trace.steps if s.kind == "error" and s.error), None)
    checked = Checked(items=items, kinds=kinds, error=prediction.error, stopped=stopped)
    return Assessment(value, evidence, warnings_for(run, checked), found.positions)


def run_tables(trace: Trace) -> RunTables:
    """The tables of a trace and the hints its steps recorded, as the evidence reads them."""
    tables = tuple((i, s.table) for i, s in enumerate(trace.steps) if s.table is not None)
    inputs = [t for i, t in tables if trace.steps[i].kind == "input"]
    source = inputs[0] if inputs else (tables[0][1] if tables else None)
    groups: tuple[str, list[tuple[str, int]]] | None = None
    query_rows: dict[str, Any] | None = None
    for step in trace.steps:
        group: Any = step.arguments.get("group")
        if step.kind == "answer" and _is_groups(group):
            groups = (str(group[0]), [(str(v), int(c)) for v, c in group[1]])
        if (
            step.kind == "sql"
            and not step.error
            and isinstance(step.arguments.get("source_rows"), dict)
        ):
            query_rows = step.arguments["source_rows"]
    return RunTables(
        question=trace.question,
        source=source,
        final=tables[-1][1] if tables else None,
        tables=tables,
        groups=groups,
        query_rows=query_rows,
        program=any(s.kind == "program" for s in trace.steps),
    )


def _is_groups(group: Any) -> bool:
    return (
        isinstance(group, list | tuple)
        and len(group) == 2
        and isinstance(group[1], list)
        and all(isinstance(g, list | tuple) and len(g) == 2 for g in group[1])
    )


def _in_source(evidence: Evidence, read: Table, source: Table) -> Evidence:
    """Evidence over a copy of ``source`` (same shape), cited in ``source``'s own cells."""
    if read.shape != source.shape:
        return evidence
    names = dict(zip(read.columns, source.columns, strict=True))
    rows = source.rows_at(sorted({c.row for c in evidence.cells}))
    at = {r: i for i, r in enumerate(sorted({c.row for c in evidence.cells}))}
    cells = [
        EvidenceCell(
            row=c.row,
            column=names[c.column],
            value=rows[at[c.row]][read.columns.index(c.column)],
        )
        for c in evidence.cells
    ]
    return evidence.model_copy(update={"cells": cells})
