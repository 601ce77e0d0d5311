"""What importing a piece of the package loads, measured in a fresh interpreter."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest


def loaded(statement: str) -> list[str]:
    """The modules a fresh interpreter holds after running ``statement``."""
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def ours(modules: list[str], *parts: str) -> list[str]:
    """The modules of ``tablereason.<part>`` for each part among ``modules``."""
    return [m for m in modules if m.split(".")[:2] in [["tablereason", p] for p in parts]]


def test_a_method_loads_nothing_of_the_harness_or_the_cli() -> None:
    modules = loaded("import tablereason.methods.chain_of_table")
    assert ours(modules, "evaluate", "cli", "api") == []
    assert "tablereason.methods.chain_of_table.method" in modules


@pytest.mark.parametrize(
    "statement",
    [
        "import tablereason.methods",
        "from tablereason.methods import METHODS",
        "import tablereason.tools",
    ],
)
def test_methods_and_tools_load_nothing_of_the_harness(statement: str) -> None:
    assert ours(loaded(statement), "evaluate", "cli") == []


def test_table_and_operations_load_no_model_code() -> None:
    modules = loaded("import tablereason.table, tablereason.operations")
    assert ours(modules, "llm", "prompts", "methods", "tools", "evaluate", "cli") == []
    assert [m for m in modules if m.split(".")[0] in ("openai", "llama_cpp")] == []


def test_the_footprint_check_sees_the_harness_where_it_is_loaded() -> None:
    # The same check on a module that does load the harness: it is not blind.
    assert ours(loaded("import tablereason.evaluate.runner"), "evaluate") != []


def test_import_tablereason_is_cheap() -> None:
    modules = loaded("import tablereason")
    heavy = [m for m in modules if m.split(".")[0] in ("duckdb", "pandas", "numpy", "pydantic")]
    assert heavy == []
    # Best of five fresh interpreters (the machine may be busy): under 10 ms.
    times = []
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import tablereason"],
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(x for x in out.stderr.splitlines() if re.search(r"\| tablereason$", x))
        times.append(int(line.split("|")[1]) / 1000)
    assert min(times) < 10, f"import tablereason took {min(times):.1f} ms at best"


def test_the_method_contract_loads_only_the_contract() -> None:
    modules = ours(loaded("import tablereason.methods.base"), *PARTS)
    assert len(modules) < 20, modules
    assert ours(modules, "llm", "table", "trace", "calls", "tools", "operations") == []
    assert [m for m in modules if m.startswith("tablereason.methods.")] == [
        "tablereason.methods.base"
    ]


def test_reading_the_catalog_loads_no_method() -> None:
    modules = loaded("from tablereason.methods import METHODS; METHODS.names()")
    methods = [m for m in modules if m.startswith("tablereason.methods.")]
    assert sorted(methods) == ["tablereason.methods.base", "tablereason.methods.catalog"], methods


PARTS = (
    "datasets", "errors", "registry", "lazy_names", "old_paths", "methods", "llm", "table",
    "trace", "calls", "tools", "operations", "answers", "sandbox", "metrics", "prompts",
)  # fmt: skip
