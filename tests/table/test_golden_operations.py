"""Golden cases for every registered operation, from tests/fixtures/operations/*.json.

Each file holds a list of cases: an input table, the operation's arguments, and
either the expected table, the expected text, or the expected error class. A table
case may also list the provenance of some of its cells: the cells of the input table
(row, column) they come from, the whole rows they rest on, or that they come from none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tablereason.errors as errors
from tablereason import Table
from tablereason.operations import OPERATIONS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "operations"


def _cases() -> list[tuple[str, dict]]:
    cases = []
    for path in sorted(FIXTURES.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8")):
            cases.append((path.stem, case))
    return cases


CASES = _cases()


def test_every_registered_operation_has_golden_cases() -> None:
    covered = {op for op, _ in CASES}
    assert set(OPERATIONS.names()) <= covered, set(OPERATIONS.names()) - covered
    assert covered <= set(OPERATIONS.names()), covered - set(OPERATIONS.names())


def test_every_table_operation_has_a_golden_provenance_case() -> None:
    traced = {op for op, case in CASES if "provenance" in case["expected"]}
    tables = {name for name in OPERATIONS.names() if OPERATIONS.get(name).returns == "table"}
    assert tables <= traced, tables - traced


@pytest.mark.parametrize(("operation", "case"), CASES, ids=[f"{o}:{c['name']}" for o, c in CASES])
def test_golden(operation: str, case: dict) -> None:
    source = case["input"]
    table = Table.from_records(source["header"], source["rows"], caption=source.get("caption"))
    for prior in case.get("before", []):
        table = table.apply(prior["operation"], **prior["args"])
    expected = case["expected"]
    if "error" in expected:
        with pytest.raises(getattr(errors, expected["error"])) as caught:
            table.apply(operation, **case["args"])
        for fragment in expected.get("message_contains", []):
            assert fragment in str(caught.value)
        return
    result = table.apply(operation, **case["args"])
    if "text" in expected:
        assert result == expected["text"]
        return
    assert result.columns == expected["header"]
    assert result.rows() == expected["rows"]
    assert result.parent is table
    assert result.step is not None and result.step.operation == operation
    if "pipe" in expected:
        assert result.to_pipe() == expected["pipe"]
    source = table.source()
    for want in expected.get("provenance", []):
        row, column = want["cell"]
        found = result.provenance(row, column)
        assert [[c.row, c.column] for c in found.cells] == want["cells"], want
        for cell in found.cells:
            assert cell.value == source.rows()[cell.row][source.columns.index(cell.column)]
        assert list(found.rows) == want.get("rows", list(found.rows)), want
        assert bool(found.untraced) == want.get("untraced", False), want
