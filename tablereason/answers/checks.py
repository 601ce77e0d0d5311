"""Warnings: signs that an answer is suspect, each with a code and a sentence.

Every check reads what every method already records: the prediction's answer and
error, its trace and the lineage of its tables. :data:`WARNING_CODES` lists the codes;
:func:`warnings_for` raises them. A chain that got its answer right raises none: the
checks look only for what a right chain does not do.

Example:
    >>> sorted(WARNING_CODES)[:3]
    ['chain_error', 'count_mismatch', 'empty_table']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tablereason.answers.cells import TableCells
from tablereason.answers.evidence import RunTables
from tablereason.answers.normalise import Item
from tablereason.answers.question import asks_count, asks_value
from tablereason.answers.records import WARNING_CODES, AnswerWarning, Kind
from tablereason.answers.value import read_number, scalar
from tablereason.table.lineage import find_registered

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table


@dataclass(frozen=True)
class Checked:
    """What the checks read besides the run's tables.

    Attributes:
        items: The normalised answer items.
        kinds: What explains each item in the final table (``None``: nothing).
        error: The prediction's error, if the run failed.
        stopped: The error of a step that ended the run, if any.
    """

    items: list[Item]
    kinds: list[Kind | None]
    error: str | None = None
    stopped: str | None = None


def warnings_for(run: RunTables, checked: Checked) -> list[AnswerWarning]:
    """The warnings of one run, in the order of :data:`WARNING_CODES`."""
    found: list[AnswerWarning] = []
    items, final = checked.items, run.final
    if checked.error or checked.stopped:
        why = _short(checked.error or checked.stopped or "")
        found.append(
            AnswerWarning(code="chain_error", message=f"the run stopped on an error: {why}")
        )
    found.extend(_no_match(run))
    if final is not None and not final.num_rows and items and not _zero(items):
        found.append(
            AnswerWarning(
                code="empty_table",
                message=f"the answer comes from a table with no rows ({_made_by(final)})",
            )
        )
    for item in items:
        if item.shape in ("row", "sentence"):
            what = "a whole row" if item.shape == "row" else "a sentence"
            reduced = f"; read as {item.text!r}" if item.text != " ".join(item.raw.split()) else ""
            found.append(
                AnswerWarning(
                    code="whole_row" if item.shape == "row" else "sentence",
                    message=f"the answer {_short(item.raw)!r} is {what}, not a value{reduced}",
                )
            )
    found.extend(_unexplained(run, checked))
    order = list(WARNING_CODES)
    return sorted(found, key=lambda w: order.index(w.code))


def _unexplained(run: RunTables, checked: Checked) -> list[AnswerWarning]:
    """``not_in_table`` and ``count_mismatch``: items nothing in the tables explains."""
    final, source = run.final, run.source
    if final is None or source is None or run.query_rows is not None or run.program:
        return []
    found: list[AnswerWarning] = []
    for item, kind in zip(checked.items, checked.kinds, strict=True):
        if kind is not None:
            continue
        value = scalar(item.text)
        number = read_number(item.text)
        if asks_count(run.question) and number is not None and float(number).is_integer():
            found.append(
                AnswerWarning(
                    code="count_mismatch",
                    message=f"the answer {item.text} counts something, but it rests on a table "
                    f"of {final.num_rows:,} rows, and no group, sum or cell of it is "
                    f"{item.text}",
                )
            )
        elif asks_value(run.question) and value.type in ("text", "number", "date"):
            if final is not source and TableCells(source).equal(item.text):
                continue  # a value of the input table the chain dropped: a wrong row, maybe
            found.append(
                AnswerWarning(
                    code="not_in_table",
                    message=f"the question asks for a value of the table, but "
                    f"{_short(item.text)!r} is in no cell of it",
                )
            )
    return found


def _no_match(run: RunTables) -> list[AnswerWarning]:
    """A table of the trace that a condition emptied: rows before it, none after."""
    found: list[AnswerWarning] = []
    seen: set[int] = set()
    for index, table in run.tables:
        for node in table.lineage()[1:]:
            parent, step = node.parent, node.step
            if id(node) in seen or parent is None or step is None:
                continue
            seen.add(id(node))
            lineage = find_registered(step.operation).lineage
            condition = lineage is not None and lineage.decided_by is not None
            if condition and parent.num_rows and not node.num_rows:
                found.append(
                    AnswerWarning(
                        code="no_match",
                        message=f"{_made_by(node)} matched none of {parent.num_rows:,} rows "
                        f"(trace step {index + 1}); check it names values as the table "
                        "writes them",
                    )
                )
    return found


def _made_by(table: Table) -> str:
    """The step that made a table, in words: ``filter_rows weather = 'Snow'``."""
    step = table.step
    if step is None:
        return "the input table"
    args = step.args.model_dump(mode="json")
    shown = args.get("condition") or args.get("terms") or args.get("query") or args
    return f"{step.operation} {_short(str(shown))}"


def _zero(items: list[Item]) -> bool:
    """Whether the answer is the count 0 (what an empty table rightly gives)."""
    return all(read_number(i.text) == 0 for i in items)


def _short(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
