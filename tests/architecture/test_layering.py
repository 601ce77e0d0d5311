"""Import direction: data flows down, never back up (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tablereason"

# What each layer must never import.
ABOVE_TABLE = {"llm", "prompts", "methods", "sandbox", "tools", "evaluate", "cli", "datasets"}
FORBIDDEN = {
    "table": ABOVE_TABLE | {"trace"},
    "storage": ABOVE_TABLE | {"table", "relation", "operations"},
    "relation": ABOVE_TABLE | {"table", "operations"},
    "formats": ABOVE_TABLE | {"table", "operations"},
    "sqlguard": ABOVE_TABLE | {"table", "operations"},
    "sqlengine": ABOVE_TABLE | {"table", "operations", "storage", "relation"},
    "sqlworker": {"*"},
    "sqllimits": {"*"},
    "operations": ABOVE_TABLE,
    "errors": {"*"},
    "registry": {"*"},
    "datasets": ABOVE_TABLE - {"datasets"} | {"operations"},
    "llm": {"table", "operations", "sandbox", "tools", "methods", "evaluate", "cli", "datasets"},
    "sandbox": {"llm", "prompts", "methods", "tools", "evaluate", "cli"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "tablereason" and len(parts) > 1:
                found.add(parts[1])
    return found


def _layer_files(layer: str) -> list[Path]:
    module = PACKAGE / f"{layer}.py"
    return [module] if module.exists() else sorted((PACKAGE / layer).rglob("*.py"))


def test_layers_import_only_downwards() -> None:
    checked = 0
    for layer, forbidden in FORBIDDEN.items():
        for path in _layer_files(layer):
            imported = _imports(path)
            bad = imported - {"errors"} if "*" in forbidden else imported & forbidden
            assert not bad, f"{path.relative_to(PACKAGE)} imports {sorted(bad)}"
            checked += 1
    assert checked >= 15


def test_table_and_operations_load_no_model_code() -> None:
    code = (
        "import sys, tablereason.table, tablereason.operations; "
        "print(sorted(m for m in sys.modules if m.split('.')[:2] in "
        "(['tablereason','llm'],['tablereason','prompts'],['tablereason','methods']) "
        "or m.split('.')[0] in ('openai','llama_cpp')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
