"""Inside ``tablereason.llm``, the roles import downwards too (docs/architecture.md, docs/llm.md).

The contract (``base``, ``constraints``, ``errors``, ``redaction``) imports no backend, no
wrapper and not the resolution; the wrappers import no backend; the backends import no
wrapper and not the resolution. Only ``resolve`` and the package's own ``__init__`` see
everything.
"""

from __future__ import annotations

import import_graph
import pytest

CONTRACT = ("base", "constraints", "errors", "redaction")
FORBIDDEN = {
    "contract": ("backends", "wrappers", "resolve"),
    "wrappers": ("backends", "resolve"),
    "backends": ("wrappers", "resolve"),
}


def role(module: str) -> str | None:
    """The role of a ``tablereason.llm`` module (None outside it, or for its package)."""
    parts = module.split(".")
    if parts[:2] != ["tablereason", "llm"] or len(parts) < 3:
        return None
    return "contract" if parts[2] in CONTRACT else parts[2]


def crossings(graph: dict[str, dict[str, int]]) -> list[str]:
    found = []
    for module, targets in sorted(graph.items()):
        mine = role(module)
        for target, line in sorted(targets.items()):
            theirs = role(target)
            if mine in FORBIDDEN and theirs in FORBIDDEN[mine]:
                found.append(f"{module} (line {line}) imports {target}")
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, int]]:
    return import_graph.edges()


def test_the_llm_roles_import_only_downwards(graph: dict[str, dict[str, int]]) -> None:
    assert crossings(graph) == []
    roles = {role(m) for m in graph} - {None}
    assert roles == {"contract", "backends", "wrappers", "resolve"}


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("tablereason.llm.base", "tablereason.llm.backends.registry"),
        ("tablereason.llm.constraints.convert", "tablereason.llm.wrappers.cache"),
        ("tablereason.llm.wrappers.cache", "tablereason.llm.backends.embedded"),
        ("tablereason.llm.backends.server.chat", "tablereason.llm.resolve"),
    ],
)
def test_the_check_sees_a_crossing(
    graph: dict[str, dict[str, int]], module: str, target: str
) -> None:
    bad = {**graph, module: {**graph[module], target: 1}}
    assert crossings(bad) == [f"{module} (line 1) imports {target}"]
