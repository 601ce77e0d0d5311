"""Golden renders of every ReWOO and ReAct prompt template, so prompt changes show in review.

Regenerate after an intended change with:
    .venv/bin/python tests/rewoo/test_rewoo_prompts.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tablereason.prompts.render import render, template_names, variables

GOLDEN = Path(__file__).parent / "golden" / "templates"
NAMES = template_names("rewoo") + template_names("react")


def _render(name: str) -> str:
    return render(name, **{v: f"<{v}>" for v in variables(name)})


@pytest.mark.parametrize("name", NAMES)
def test_template_matches_golden(name: str) -> None:
    golden = GOLDEN / f"{name.replace('/', '__')}.txt"
    assert golden.is_file(), f"no golden render for {name}; run this file to create it"
    assert _render(name) == golden.read_text(encoding="utf-8")


def test_every_golden_has_a_template() -> None:
    expected = {f"{n.replace('/', '__')}.txt" for n in NAMES}
    assert {p.name for p in GOLDEN.iterdir()} == expected
    assert len(NAMES) == 12


def test_demo_files_use_the_watchword_placeholder() -> None:
    for name in template_names("react"):
        if "/demos_" in name:
            assert variables(name) == ["watchword"]
            assert "Action:" not in _render(name)


if __name__ == "__main__":
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        (GOLDEN / f"{name.replace('/', '__')}.txt").write_text(_render(name), encoding="utf-8")
