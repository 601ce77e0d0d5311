"""Evidence: the input-table cells an answer rests on.

Each answer item is explained in the run's final table (the last table of its trace),
then followed back to the input table through the cells' lineage
(:mod:`tablereason.table.provenance`). An item rests on:

* ``equal``: the cells of the final table equal to it (in the columns the question
  names, when it matches in several columns and names some);
* ``group``: after a group step, the rows of the group it names or whose count it is
  (their grouped column; for a count, also the cells that kept those rows);
* ``count``: for a number that is the final table's row count, the rows counted: the
  cells that kept them (a filter's condition columns), else the rows' cells;
* ``sum`` / ``mean``: for a number that is a numeric column's sum or average, that
  column's cells.

Methods that change no table record what they can: Text-to-SQL the input rows behind
each result row (``query``, carried through the query as row numbers), and a program's
answer is matched against the input table's cells (``match``: its steps are not
traced). Without a table the evidence is ``not_available``, with the reason.

Evidence lists its first :data:`~tablereason.answers.records.EVIDENCE_LIMIT` cells with
their values and counts them all; the positions of every cell are kept as numpy arrays
while they are found, so a count over 500,000 rows is exact. ``Evidence.marks`` holds,
for each table of the trace (by step index), its cells among the first
:data:`MARK_ROWS` rows whose lineage reaches the evidence: the cells a page or a
terminal highlights.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tablereason.answers.cells import TableCells, cell_key, same_number
from tablereason.answers.normalise import Item
from tablereason.answers.question import asks_count, mentions
from tablereason.answers.records import EVIDENCE_LIMIT, KIND_TEXT, Evidence, EvidenceCell, Kind
from tablereason.answers.value import read_number
from tablereason.table.lineage import ROW, Refs
from tablereason.table.provenance import Traced, trace_back

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

MARK_ROWS = 1000
"""Rows of each trace table whose cells can be highlighted."""
MARK_LIMIT = 500
"""Most highlighted cells per trace table."""


@dataclass(frozen=True)
class RunTables:
    """What the evidence reads of a run: its question, tables and recorded hints.

    Attributes:
        question: The question.
        source: The input table (the trace's first table), if any.
        final: The last table of the trace, if any.
        tables: ``(step index, table)`` for every step with a table.
        groups: ``(column, [(value, count)])`` a group step left for the answer.
        query_rows: What Text-to-SQL recorded of the rows behind its result.
        program: Whether the answer is a program's value.
    """

    question: str
    source: Table | None
    final: Table | None
    tables: tuple[tuple[int, Table], ...] = ()
    groups: tuple[str, list[tuple[str, int]]] | None = None
    query_rows: dict[str, Any] | None = None
    program: bool = False


@dataclass(frozen=True)
class Found:
    """The evidence of an answer, what explains each item, and every cited position.

    Attributes:
        evidence: The evidence record.
        kinds: What explains each item (``None``: nothing).
        positions: Every cited cell of the input table: row positions per column (the
            record lists the first ones only).
    """

    evidence: Evidence
    kinds: list[Kind | None]
    positions: dict[str, np.ndarray]


def find_evidence(run: RunTables, items: list[Item]) -> Found:
    """The evidence of the answer ``items`` (see module notes).

    Args:
        run: The run's tables and hints.
        items: The normalised answer items.
    """
    source, final = run.source, run.final
    if source is None or final is None:
        lost = Evidence(status="not_available", how="the run read no table")
        return Found(lost, [None] * len(items), {})
    if not items:
        return Found(Evidence(status="none", how="there is no answer"), [], {})
    if run.query_rows is not None:
        return _from_query(run, source, items)
    if run.program:
        return _from_match(run, source, items)
    cells = TableCells(final)
    refs, kinds = Refs(), []
    for tag, item in enumerate(items):
        kind, found = explain(tag, item, final, cells, run)
        kinds.append(kind)
        refs.merge(found)
    traced = trace_back(final, refs, stop_at=source)
    bare = [t for t, k in enumerate(kinds) if k == "count" and t not in _cell_tags(traced)]
    if bare:  # rows no condition chose: the rows' own cells stand for them
        rows = np.arange(final.num_rows, dtype=np.int64)
        whole = Refs()
        for tag in bare:
            for column in final.columns:
                whole.add(column, rows, np.full(len(rows), tag, dtype=np.int64))
        more = trace_back(final, whole, stop_at=source)
        traced.refs.merge(more.refs)
        traced.untraced.extend(more.untraced)
    return _found(run, traced, kinds, "lineage")


def explain(
    tag: int, item: Item, final: Table, cells: TableCells, run: RunTables
) -> tuple[Kind | None, Refs]:
    """What in the final table explains one answer item, as cells tagged ``tag``."""
    number = read_number(item.text)
    counting = asks_count(run.question) and number is not None
    by_value: list[str] = []
    by_count: list[str] = []
    column = None
    if run.groups is not None and run.groups[0] in final.columns:
        column, counts = run.groups
        by_value = [v for v, _ in counts if cell_key(v) == cell_key(item.text)]
        if number is not None:
            by_count = [v for v, c in counts if same_number(float(c), float(number))]
    order: tuple[str, ...] = ("group_value", "equal", "group_count", "count", "sum")
    if counting:
        order = ("group_count", "count", "sum", "equal")
    for way in order:
        refs = Refs()
        if way.startswith("group") and column is not None:
            values = by_count if way == "group_count" else by_value
            for value in values:
                rows = cells.holding(column, value)
                refs.add(column, rows, np.full(len(rows), tag, dtype=np.int64))
                if way == "group_count":
                    refs.add(ROW, rows, np.full(len(rows), tag, dtype=np.int64))
            if refs:
                return "group", refs
        elif way == "equal":
            found = cells.equal(item.text)
            named = {c: p for c, p in found.items() if mentions(run.question, c)}
            for equal, rows in (named or found).items():
                refs.add(equal, rows, np.full(len(rows), tag, dtype=np.int64))
            if refs:
                return "equal", refs
        elif way == "count" and number is not None:
            if same_number(float(number), float(final.num_rows)):  # 0 of no rows too
                rows = np.arange(final.num_rows, dtype=np.int64)
                refs.add(ROW, rows, np.full(len(rows), tag, dtype=np.int64))
                return "count", refs
        elif way == "sum" and number is not None:
            kind, name = _aggregate(cells, item.text, float(number), counting)
            if kind is not None and name is not None:
                rows = np.arange(final.num_rows, dtype=np.int64)
                refs.add(name, rows, np.full(len(rows), tag, dtype=np.int64))
                return kind, refs
    return None, Refs()


def _aggregate(
    cells: TableCells, text: str, number: float, counting: bool
) -> tuple[Kind | None, str | None]:
    """The numeric column whose sum (else average) ``number`` is, written as in ``text``.

    The answer to a count question may be a sum (units sold), never an average.
    """
    decimals = re.search(r"\.(\d+)", text)
    tolerance = 0.5 * 10 ** -(len(decimals.group(1)) if decimals else 0)
    sums = cells.sums()
    for kind, index in (("sum", 0), ("mean", 1))[: 1 if counting else 2]:
        for name, values in sums.items():
            if abs(values[index] - number) <= tolerance + 1e-9 * abs(number):
                return kind, name  # type: ignore[return-value]
    return None, None


def _cell_tags(traced: Traced) -> set[int]:
    return {int(t) for c, _, tags in traced.refs.items() if c is not ROW for t in tags.tolist()}


def _from_query(run: RunTables, source: Table, items: list[Item]) -> Found:
    """Evidence from the input rows Text-to-SQL carried through its query."""
    record = run.query_rows or {}
    if record.get("unavailable"):
        why = f"not available: {record['unavailable']}"
        return Found(Evidence(status="not_available", how=why), [None] * len(items), {})
    names = source.columns
    reads = [names[i] for i in record.get("reads") or [] if i < len(names)]
    condition = [names[i] for i in record.get("condition") or [] if i < len(names)]
    cells = TableCells(source)
    refs, kinds = Refs(), list[Kind | None]()
    for tag, item in enumerate(items):
        rows_of = record.get("rows") or []
        rows = np.asarray(rows_of[tag] if tag < len(rows_of) else [], dtype=np.int64)
        kinds.append("query" if len(rows) else None)
        columns = reads or condition or names
        equal = cells.equal(item.text) if reads else {}
        for name in columns:
            at = rows
            if name in equal and np.isin(rows, equal[name]).any():
                at = rows[np.isin(rows, equal[name])]  # a max or min: the cells that are it
            refs.add(name, at, np.full(len(at), tag, dtype=np.int64))
    return _found(run, Traced(source, refs), kinds, "query")


def _from_match(run: RunTables, source: Table, items: list[Item]) -> Found:
    """Evidence of a program's answer: the input cells equal to it, not traced."""
    cells = TableCells(source)
    refs, kinds = Refs(), list[Kind | None]()
    for tag, item in enumerate(items):
        found = cells.equal(item.text)
        kinds.append("match" if found else None)
        for name, rows in found.items():
            refs.add(name, rows, np.full(len(rows), tag, dtype=np.int64))
    if not refs:
        how = "not available: a program's steps are not traced, and no input cell equals the answer"
        return Found(Evidence(status="not_available", basis="match", how=how), kinds, {})
    return _found(run, Traced(source, refs), kinds, "match")


def _found(run: RunTables, traced: Traced, kinds: list[Kind | None], basis: Any) -> Found:
    read = traced.read(EVIDENCE_LIMIT)
    found = [k for k in dict.fromkeys(kinds) if k is not None]
    if read.total:
        how = "; ".join(KIND_TEXT[k] for k in found)
    else:
        how = (
            "no cell of the final table equals the answer, and no group, count or sum "
            "over it gives it"
        )
    evidence = Evidence(
        status="found" if read.total else "none",
        basis=basis if read.total else "none",
        how=how,
        cells=[EvidenceCell(row=c.row, column=c.column, value=c.value) for c in read.cells],
        total=read.total,
        untraced=list(read.untraced),
        marks=marks(run, traced),
    )
    return Found(evidence, kinds, traced.positions())


def marks(run: RunTables, traced: Traced) -> dict[int, list[tuple[int, str]]]:
    """Per trace step index, the cells of its table whose lineage reaches the evidence."""
    positions = traced.positions()
    if not positions or run.source is None or traced.source is not run.source:
        return {}
    out: dict[int, list[tuple[int, str]]] = {}
    done: dict[int, list[tuple[int, str]]] = {}
    for index, table in run.tables:
        if id(table) not in done:
            done[id(table)] = _table_marks(table, run.source, positions)
        if done[id(table)]:
            out[index] = done[id(table)]
    return out


def _table_marks(
    table: Table, source: Table, positions: dict[str, np.ndarray]
) -> list[tuple[int, str]]:
    rows = min(table.num_rows, MARK_ROWS)
    if table is source:
        found = [
            (int(r), c) for c, p in positions.items() if c in table.columns for r in p[p < rows]
        ]
        return sorted(found, key=lambda rc: (rc[0], table.columns.index(rc[1])))[:MARK_LIMIT]
    cells = [(r, c) for r in range(rows) for c in table.columns]
    traced = trace_back(table, Refs.of(cells), stop_at=source)
    if traced.source is not source:
        return []
    hit = traced.tags_in(positions)
    return [cells[t] for t in sorted(hit)][:MARK_LIMIT]
