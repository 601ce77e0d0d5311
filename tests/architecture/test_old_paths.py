"""Import paths from before the package layout keep working (with a warning)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tablereason.old_paths import MOVED


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_is_the_module_at_its_new_home(old: str, new: str) -> None:
    code = (
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        f"    old = importlib.import_module({old!r})\n"
        f"new = importlib.import_module({new!r})\n"
        "assert old is new, (old, new)\n"
        "assert old.__spec__.name == new.__name__\n"
        f"assert any({new!r} in str(w.message) for w in seen)\n"
        "assert all(w.category is DeprecationWarning for w in seen)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_new_home_exists_and_no_old_file_is_left() -> None:
    for old, new in MOVED.items():
        assert importlib.util.find_spec(new) is not None, new
        parent, _, leaf = old.rpartition(".")
        spec = importlib.util.find_spec(parent)
        assert spec is not None and spec.submodule_search_locations
        folder = Path(spec.submodule_search_locations[0])
        assert not (folder / f"{leaf}.py").exists(), f"{old} is both a file and an alias"
        assert not (folder / leaf / "__init__.py").exists(), f"{old} is both a package and an alias"


@pytest.mark.parametrize(
    ("statement", "name"),
    [
        ("from tablereason.table import Table", "Table"),
        ("from tablereason.table import Step", "Step"),
        ("from tablereason.trace import Prediction, Trace, TraceStep", "Trace"),
        ("from tablereason.methods.chain_of_table import ChainOfTable", "ChainOfTable"),
        ("from tablereason.methods.chain_of_table import completions", "completions"),
        ("from tablereason.methods import ChainOfTable", "ChainOfTable"),
        ("from tablereason.cli import main", "main"),
        ("from tablereason import ask, load_table, Table", "ask"),
    ],
)
def test_public_names_keep_their_paths(statement: str, name: str) -> None:
    namespace: dict[str, object] = {}
    exec(statement, namespace)  # our own fixed import statements, not model output
    assert name in namespace
