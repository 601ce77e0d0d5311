"""The package's import graph, read from the source (no module is imported).

Every ``import`` counts, at module level or inside a function, except those under
``if TYPE_CHECKING:``. An import of a package's own ancestor (``tablereason.table.io.readers``
importing ``tablereason.table``) is not an edge: Python has started that package already.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tablereason"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package under ``package``."""
    out: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(inner) for inner in ast.walk(node))
    return hidden


def imported_names(path: Path, modules: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """``(dotted name, line)`` of each module the file imports, TYPE_CHECKING aside.

    ``from pkg import a, b`` names ``pkg.a`` and ``pkg.b`` where those are modules, and
    ``pkg`` itself when anything else is taken from it.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [f"{node.module}.{a.name}" for a in node.names]
            subs = [name for name in subs if name in modules]
            if len(subs) < len(node.names):
                yield node.module, node.lineno
            for name in subs:
                yield name, node.lineno


def edges(modules: dict[str, Path] | None = None) -> dict[str, dict[str, int]]:
    """Module -> {module it imports: first line}, within the package only."""
    modules = module_files() if modules is None else modules
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        found: dict[str, int] = {}
        for dotted, line in imported_names(path, modules):
            target = dotted
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name and not name.startswith(target + "."):
                found.setdefault(target, line)
        graph[name] = found
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def layer(module: str) -> str:
    """The top-level part of the package a module belongs to (``table``, ``methods``...)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "tablereason"
