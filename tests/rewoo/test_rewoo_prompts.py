"""Golden renders of every ReWOO and ReAct prompt template, so prompt changes show in review.

Regenerate after an intended change with:
    TABLEREASON_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/rewoo/test_rewoo_prompts.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import golden

from tablereason.prompts.render import render, template_names, variables

GOLDEN = Path(__file__).parent / "golden" / "templates"
NAMES = template_names("rewoo") + template_names("react")


def _render(name: str) -> str:
    return render(name, **{v: f"<{v}>" for v in variables(name)})


@pytest.mark.parametrize("name", NAMES)
def test_template_matches_golden(name: str) -> None:
    golden.check(GOLDEN / f"{name.replace('/', '__')}.txt", _render(name))


def test_every_golden_has_a_template() -> None:
    expected = {f"{n.replace('/', '__')}.txt" for n in NAMES}
    assert {p.name for p in GOLDEN.iterdir()} == expected
    assert len(NAMES) == 14


def test_demo_files_use_the_watchword_placeholder() -> None:
    for name in template_names("react"):
        if "/demos_" in name:
            assert variables(name) == ["watchword"]
            assert "Action:" not in _render(name)
