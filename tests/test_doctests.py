"""Every example in the package's docstrings runs and prints what it shows.

All modules are collected from the source tree, so a new module's examples run without
being listed. Examples that need a model, a server or a long run carry ``+SKIP``.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tablereason"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


MODULES = _modules()

# The engine's modules promise an example each (they are the library's reference).
MUST_HAVE_EXAMPLES = {
    "tablereason",
    "tablereason.errors",
    "tablereason.registry",
    "tablereason.table",
    "tablereason.table.formats",
    "tablereason.sandbox.sql.guard",
    *(f"tablereason.operations.{p.stem}" for p in (PACKAGE / "operations").glob("*.py")
      if p.stem not in ("__init__", "catalog")),
}  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PACKAGE.parent)  # examples read files such as examples/*.csv
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, report=True)
    assert result.failed == 0, f"{result.failed} failing example(s) in {name}"
    if name in MUST_HAVE_EXAMPLES:
        assert result.attempted > 0, f"{name} has no runnable example"


def test_every_module_is_collected() -> None:
    assert len(MODULES) > 150
    assert "tablereason.table.value" in MODULES and "tablereason.cli.main" in MODULES
