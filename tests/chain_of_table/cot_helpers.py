"""Helpers for the Chain-of-Table tests: fixture tables cut from the benchmark data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tablereason.table import Table

FIXTURES = Path(__file__).parents[1] / "fixtures" / "chain_of_table"


def load_fixture(name: str) -> list[dict[str, Any]]:
    """Records of ``tests/fixtures/chain_of_table/<name>.jsonl``."""
    lines = (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def fixture_table(record: dict[str, Any]) -> Table:
    """The fixture's table."""
    return Table.from_records(record["header"], record["rows"], caption=record["caption"])
