"""docs/architecture.md stays the map of the code: every module is on it, nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import import_graph

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_every_module_has_its_line_in_the_layout() -> None:
    text = DOC.read_text(encoding="utf-8")
    layout = text[text.index("## Layout") :]
    listed = set(re.findall(r"^- `([\w/]+\.py)`:", layout, flags=re.M))
    package = import_graph.PACKAGE
    present = {str(p.relative_to(package)) for p in package.rglob("*.py")}
    assert sorted(present - listed) == [], "modules missing from docs/architecture.md"
    assert sorted(listed - present) == [], "docs/architecture.md lists modules that are gone"


def test_the_layering_table_matches_the_test() -> None:
    from test_layering import ALLOWED

    text = DOC.read_text(encoding="utf-8")
    rules = text[text.index("## The layering rules") : text.index("## Layout")]
    rows = [line for line in rules.splitlines() if line.startswith("| `")]
    named = {part for row in rows for part in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert named == set(ALLOWED) - {"tablereason"}
