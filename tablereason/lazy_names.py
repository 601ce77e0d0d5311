"""Package names that load on first use: a module ``__getattr__`` and ``__dir__`` from a map.

``tablereason``, ``tablereason.llm`` and ``tablereason.evaluate`` export names whose
modules are costly to import (DuckDB, the backends, the harness). Each maps a public
name to the module that defines it and lets :func:`lazy_names` write the two module
hooks; a name is imported when first read, then kept in the package's namespace.

Example:
    >>> namespace = {}
    >>> getattr_, dir_ = lazy_names("demo", {"dumps": "json", "json": "json"}, namespace)
    >>> getattr_("dumps")([1])
    '[1]'
    >>> getattr_("json").__name__, "dumps" in namespace
    ('json', True)
    >>> getattr_("nothing")
    Traceback (most recent call last):
    ...
    AttributeError: module 'demo' has no attribute 'nothing'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_names(
    package: str, names: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for ``names``.

    Args:
        package: The package's name, for the error message.
        names: Public name -> the module that defines it; a name that is the module's
            own last part (``"operations"`` -> ``"tablereason.operations"``) is the module.
        namespace: The package's ``globals()``, where a loaded name is kept.
    """

    def getattr_(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        loaded = importlib.import_module(module)
        value = loaded if module.rsplit(".", 1)[-1] == name else getattr(loaded, name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *names})

    return getattr_, dir_
