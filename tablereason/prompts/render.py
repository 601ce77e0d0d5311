"""Strict rendering of prompt templates shipped as package text files.

A template is a UTF-8 text file under ``tablereason/prompts/`` named by its path
without the ``.txt`` suffix (``"chain_of_table/plan"``). Placeholders are written
``{{ name }}``; everything else, braces included, is literal text, so JSON and
code in demos need no escaping. One trailing newline of the file is dropped, so a
template can end exactly where the model should continue.

Rendering is strict: a placeholder without a value and a value without a
placeholder both raise :class:`PromptRenderError`.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib import resources

from tablereason.errors import ConfigurationError, did_you_mean

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_PACKAGE = "tablereason.prompts"


class PromptRenderError(ConfigurationError, KeyError):
    """A template is unknown, or its variables do not match the values given."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def template_names(folder: str = "") -> list[str]:
    """Names of every template under ``folder`` (all templates when empty), sorted.

    Example:
        >>> "chain_of_table/shared/final_tabfact" in template_names("chain_of_table")
        True
    """
    root = resources.files(_PACKAGE)
    names: list[str] = []

    def walk(node: object, prefix: str) -> None:
        for child in node.iterdir():  # type: ignore[attr-defined]
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(".txt"):
                names.append(prefix + child.name[: -len(".txt")])

    walk(root, "")
    wanted = folder.strip("/") + "/" if folder else ""
    return sorted(n for n in names if n.startswith(wanted))


@cache
def template(name: str) -> str:
    """The raw text of template ``name`` (one trailing newline removed).

    Raises:
        PromptRenderError: If no such template exists (with the closest name).

    Example:
        >>> template("chain_of_table/shared/final_tabfact").startswith("{{")
        False
    """
    path = resources.files(_PACKAGE).joinpath(*f"{name}.txt".split("/"))
    if not path.is_file():
        raise PromptRenderError(did_you_mean(name, template_names(), kind="prompt template"))
    text = path.read_text(encoding="utf-8")
    return text[:-1] if text.endswith("\n") else text


def variables(name: str) -> list[str]:
    """Placeholder names of template ``name``, in first-use order.

    Example:
        >>> variables("chain_of_table/shared/final_tabfact")
        ['table', 'group', 'question']
    """
    seen: dict[str, None] = {}
    for match in _PLACEHOLDER.finditer(template(name)):
        seen.setdefault(match.group(1), None)
    return list(seen)


def template_hash(name: str) -> str:
    """A stable 12-hex-digit hash of the template text, for run configurations.

    Example:
        >>> len(template_hash("chain_of_table/shared/final_tabfact"))
        12
    """
    return hashlib.sha256(template(name).encode("utf-8")).hexdigest()[:12]


def render(name: str, /, **values: str) -> str:
    r"""Render template ``name`` with exactly the variables it uses.

    Args:
        name: Template name, e.g. ``"chain_of_table/shared/final_tabfact"``.
        **values: One string per placeholder.

    Returns:
        The rendered prompt.

    Raises:
        PromptRenderError: If a placeholder has no value, a value has no
            placeholder, or the template does not exist.

    Example:
        >>> text = render("chain_of_table/shared/final_tabfact", table="/*\n*/", group="",
        ...               question="x")
        >>> text.endswith("x\nThe answer is:")
        True
    """
    wanted = set(variables(name))
    given = set(values)
    if wanted != given:
        missing = sorted(wanted - given)
        unused = sorted(given - wanted)
        parts = []
        if missing:
            parts.append(f"missing variable(s) {missing}")
        if unused:
            parts.append(f"unused variable(s) {unused}")
        raise PromptRenderError(
            f"prompt {name!r}: {'; '.join(parts)}; the template uses {sorted(wanted)}"
        )
    for key, value in values.items():
        if not isinstance(value, str):
            raise PromptRenderError(f"prompt {name!r}: variable {key!r} must be a str")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template(name))
