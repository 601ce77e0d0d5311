"""Every model call of the methods and tools goes through the one door (``tablereason.calls``).

Read from the source: outside ``tablereason/calls/``, no module of ``methods/`` or
``tools/`` builds a ``Request``, imports it, or calls a model's ``complete`` /
``acomplete`` itself. The checker is shown to catch each way around the door.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tablereason"
GUARDED = ("methods", "tools")


def bypasses(source: str) -> list[str]:
    """How a module's source reaches a model without the door (empty: it does not)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name == "Request":
                found.append(f"line {node.lineno}: builds a Request")
            if isinstance(func, ast.Attribute) and name in ("complete", "acomplete"):
                found.append(f"line {node.lineno}: calls .{name}() on a model")
        elif isinstance(node, ast.ImportFrom) and any(a.name == "Request" for a in node.names):
            found.append(f"line {node.lineno}: imports Request")
        elif isinstance(node, ast.Attribute) and node.attr == "Request":
            found.append(f"line {node.lineno}: refers to llm.Request")
    return found


def test_no_method_or_tool_asks_a_model_but_through_the_door() -> None:
    offenders = {}
    files = [p for part in GUARDED for p in sorted((PACKAGE / part).rglob("*.py"))]
    assert len(files) > 40
    for path in files:
        found = bypasses(path.read_text(encoding="utf-8"))
        if found:
            offenders[str(path.relative_to(PACKAGE))] = found
    assert offenders == {}


def test_the_door_itself_builds_the_requests() -> None:
    assert bypasses((PACKAGE / "calls" / "door.py").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "source",
    [
        "from tablereason.llm.base import Request\n",
        "from tablereason.llm import LLM, Request as R\n",
        "import tablereason.llm as llm\nllm.Request(prompt='x')\n",
        "def f(llm, r):\n    return llm.complete(r)\n",
        "async def f(self, r):\n    return await self.llm.acomplete(r)\n",
        "def f(make):\n    return make.Request(prompt='x')\n",
    ],
)
def test_each_way_around_the_door_is_caught(source: str) -> None:
    assert bypasses(source)


def test_ordinary_code_is_not_flagged() -> None:
    source = (
        "from tablereason.calls import Door, ReplySpec\n"
        "def f(door, step):\n    return door.ask(step, 'p', ReplySpec())\n"
    )
    assert bypasses(source) == []
