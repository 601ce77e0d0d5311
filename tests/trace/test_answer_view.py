"""The page, the notebook view and the terminal mark the evidence and list the warnings."""

from __future__ import annotations

import io
import re

from tablereason.llm import Request, ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.table import Table
from tablereason.trace import Prediction
from tablereason.trace.answer_view import checked_lines, evidence_lines

TEAMS = Table.from_records(
    ["team", "city", "wins"],
    [
        ["Reds", "Oslo", "3"],
        ["Blues", "Rome", "9"],
        ["Greens", "Oslo", "9"],
        ["Golds", "Bern", "1"],
    ],
)


def run(answer: str, plan: str = " f_select_row(row 2, row 3) -> <END>") -> Prediction:
    def reply(request: Request) -> str:
        site = request.call_site.rsplit("/", 1)[-1]
        return plan if site == "plan" else answer

    return ChainOfTable(ScriptedLLM(fn=reply), task="wikitq").run(TEAMS, "which city won 9?")


def evidence_cells(page: str) -> list[str]:
    return re.findall(r"<td class='evidence'>([^<]*)</td>", page)


def test_the_page_marks_the_evidence_in_the_input_and_every_later_table() -> None:
    prediction = run(" Rome")
    page = prediction.to_html()
    # Input table (step 1), then before/after of the selection, then the answer's table.
    assert evidence_cells(page) == ["Rome"] * 4
    assert "<span class='evidence'>evidence</span>" in page  # the legend
    assert "Evidence: 1 cell(s) of the input table" in page
    assert "class='warning'" not in page
    assert evidence_cells(prediction._repr_html_()) == ["Rome"] * 4  # the notebook view


def test_the_page_lists_the_warnings() -> None:
    prediction = run(" Paris")
    page = prediction.to_html()
    assert "Warning <code>not_in_table</code>" in page and evidence_cells(page) == []
    assert prediction.evidence and prediction.evidence.status == "none"
    assert "Evidence: none (no cell of the final table equals the answer" in page


def test_the_terminal_marks_the_evidence_between_stars_and_lists_it() -> None:
    prediction = run(" Rome")
    out = io.StringIO()
    checks = prediction.checks()
    prediction.trace.print(out, answer=prediction.answer, evidence=checks["evidence"], plain=True)
    text = out.getvalue()
    assert text.count("*Rome*") == 2  # the input table and the selection (then unchanged)
    assert text.rstrip().endswith("Evidence: row 2, city = Rome")


def test_evidence_lines_are_bounded_and_say_what_is_left() -> None:
    cells = [{"row": i, "column": "n", "value": str(i)} for i in range(50)]
    lines = evidence_lines({"status": "found", "cells": cells, "total": 125_000}, limit=3)
    assert lines == [
        "Evidence: row 1, n = 0",
        "Evidence: row 2, n = 1",
        "Evidence: row 3, n = 2",
        "Evidence: … and 124,997 more cells",
    ]
    assert evidence_lines({"status": "not_available", "how": "the run read no table"}) == [
        "Evidence: none (the run read no table)"
    ]
    assert checked_lines("", None, {"status": "none"}, []) == []  # no answer, no evidence


def test_control_characters_in_evidence_are_shown_not_obeyed() -> None:
    cells = [{"row": 0, "column": "a\x1b[2J", "value": "x\x07"}]
    line = evidence_lines({"status": "found", "cells": cells, "total": 1})[0]
    assert "\x1b" not in line and "\x07" not in line
