"""Import direction: data flows down, never back up (docs/architecture.md).

The rules are a whitelist: each part of the package names the parts it may import.
Every import counts, at module level or inside a function (TYPE_CHECKING blocks aside),
so a cycle cannot hide behind a function-local import. The one upward arrow is the
user-facing Table verbs calling the operations, from one module.
"""

from __future__ import annotations

import import_graph
import pytest

EVERYTHING = {
    "errors", "registry", "old_paths", "lazy_names", "table", "operations", "datasets", "llm",
    "prompts", "sandbox", "answers", "trace", "calls", "metrics", "tools", "methods", "evaluate",
    "api",
    "cli",
}  # fmt: skip

# part -> the parts it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "tablereason": {"errors", "registry", "old_paths", "lazy_names"},
    "errors": set(),
    "registry": {"errors"},
    "old_paths": set(),
    "lazy_names": set(),
    "table": {"errors", "registry"},
    "operations": {"errors", "registry", "table", "sandbox"},
    "datasets": {"errors", "registry", "table"},
    "llm": {"errors", "registry", "lazy_names"},
    "prompts": {"errors"},
    "sandbox": {"errors", "registry", "table"},
    "answers": {"errors", "table", "operations", "sandbox"},
    "trace": {"errors", "table", "llm", "answers"},
    "calls": {"errors", "llm", "trace"},
    "metrics": {"errors", "registry", "datasets"},
    "tools": {
        "errors", "registry", "table", "operations", "sandbox", "llm", "prompts", "answers",
        "trace", "datasets", "calls",
    },
    "methods": EVERYTHING - {"evaluate", "cli", "api"},
    "evaluate": EVERYTHING - {"cli", "api"},
    "api": {"errors", "table", "llm", "methods", "answers", "trace", "datasets"},
    "cli": EVERYTHING,
}

# The one upward arrow: (importing module, imported part).
UPWARD = {("tablereason.table.verbs", "operations")}


def violations(graph: dict[str, dict[str, int]]) -> list[str]:
    """Every import that breaks :data:`ALLOWED` (an unknown part breaks it too)."""
    found = []
    for module, targets in sorted(graph.items()):
        part = import_graph.layer(module)
        allowed = ALLOWED.get(part)
        for target, line in sorted(targets.items()):
            target_part = import_graph.layer(target)
            if target_part == part or (module, target_part) in UPWARD:
                continue
            if allowed is None or target_part not in allowed:
                found.append(f"{module} (line {line}) imports {target}")
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, int]]:
    return import_graph.edges()


def test_every_part_of_the_package_has_a_rule(graph: dict[str, dict[str, int]]) -> None:
    parts = {import_graph.layer(module) for module in graph}
    assert parts - set(ALLOWED) == set(), "a new part of the package needs a row in ALLOWED"
    assert len(graph) > 100


def test_layers_import_only_downwards(graph: dict[str, dict[str, int]]) -> None:
    assert violations(graph) == []


def test_the_package_has_no_import_cycles(graph: dict[str, dict[str, int]]) -> None:
    assert import_graph.cycles(graph) == []


def test_the_one_upward_arrow_is_the_table_verbs(graph: dict[str, dict[str, int]]) -> None:
    upward = sorted(
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if import_graph.layer(module) == "table" and import_graph.layer(target) == "operations"
    )
    assert {module for module, _ in upward} <= {module for module, _ in UPWARD}


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("tablereason.table.value", "tablereason.methods"),  # the engine reaching up
        ("tablereason.operations.sort_by", "tablereason.llm.base"),
        ("tablereason.tools.table_tool", "tablereason.methods"),
        ("tablereason.calls.door", "tablereason.methods"),  # the door serves methods and tools
        ("tablereason.calls.door", "tablereason.tools"),
        ("tablereason.methods.react", "tablereason.evaluate.runner"),
        ("tablereason.metrics.scorers", "tablereason.evaluate"),
        ("tablereason.datasets.loader", "tablereason.operations"),
        ("tablereason.table.storage", "tablereason.operations"),  # upward, but not the verbs
    ],
)
def test_an_added_forbidden_import_fails_the_rules(
    graph: dict[str, dict[str, int]], module: str, target: str
) -> None:
    changed = {name: dict(targets) for name, targets in graph.items()}
    changed[module][target] = 1
    assert violations(changed) == [f"{module} (line 1) imports {target}"]


def test_an_added_cycle_is_found(graph: dict[str, dict[str, int]]) -> None:
    changed = {name: dict(targets) for name, targets in graph.items()}
    changed["tablereason.errors"]["tablereason.table.value"] = 1  # errors <- table <- errors
    assert any("tablereason.errors" in cycle for cycle in import_graph.cycles(changed))


def test_function_local_imports_count(tmp_path) -> None:
    package = tmp_path / "tablereason"
    (package / "table").mkdir(parents=True)
    for name in ("__init__.py", "table/__init__.py", "methods.py"):
        (package / name).write_text("")
    (package / "table" / "value.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import tablereason.methods\n"
        "def later():\n    from tablereason import methods\n"
    )
    found = import_graph.edges(import_graph.module_files(package))
    assert found["tablereason.table.value"] == {"tablereason.methods": 5}


OPERATION_DOORS = {
    "tablereason.table.kernel",  # the table's storage, rows, cells, children, SQL vocabulary
    "tablereason.table.relation",  # columns and the relation a scan reads
    "tablereason.table.lineage",  # the Step a child records
    "tablereason.table.types",  # column types and missing cells
    "tablereason.table.typed_frame",  # a table as the SQL worker receives it
    "tablereason.table.database",  # the database's settings (threads), read only
}
"""What of the engine the operations may import: never its storage, value or files."""


def operation_doors_crossed(graph: dict[str, dict[str, int]]) -> list[str]:
    return sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if import_graph.layer(module) == "operations"
        for target in targets
        if import_graph.layer(target) == "table" and target not in OPERATION_DOORS
    )


def test_operations_reach_the_storage_only_through_the_kernel(
    graph: dict[str, dict[str, int]],
) -> None:
    assert operation_doors_crossed(graph) == []
    changed = {name: dict(targets) for name, targets in graph.items()}
    changed["tablereason.operations.group_by"]["tablereason.table.storage"] = 1
    assert operation_doors_crossed(changed) == [
        "tablereason.operations.group_by imports tablereason.table.storage"
    ]


def test_the_composed_methods_build_others_by_name_without_a_cycle(
    graph: dict[str, dict[str, int]],
) -> None:
    composed = [m for m in graph if m.startswith("tablereason.methods.composed.")]
    assert len(composed) >= 5
    assert "tablereason.methods.catalog" in graph["tablereason.methods.composed.runs"]
    # the catalog names them by string and imports none of them; the one method it
    # imports is Chain-of-Table, inside the Table tool's default reasoner
    catalog = graph["tablereason.methods.catalog"]
    imported = {m for m in catalog if m.startswith("tablereason.methods.")}
    assert imported == {"tablereason.methods.base", "tablereason.methods.chain_of_table.method"}
    assert import_graph.cycles(graph) == []
