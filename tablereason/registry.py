"""A small typed registry for every named thing (operations, methods, tools, datasets...)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from tablereason.errors import ConfigurationError, UnknownNameError, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """Names mapped to items, with "did you mean" errors for unknown names.

    Args:
        kind: What the registry holds, used in error messages ("operation").

    Example:
        >>> tools: Registry[int] = Registry("tool")
        >>> tools.register("calc", 1)
        1
        >>> tools.get("calc")
        1
        >>> tools.names()
        ['calc']
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T, *, replace: bool = False) -> T:
        """Register ``item`` under ``name`` and return it.

        Raises:
            ConfigurationError: If the name is taken and ``replace`` is false.
        """
        if not replace and name in self._items:
            raise ConfigurationError(f"{self.kind} {name!r} is already registered")
        self._items[name] = item
        return item

    def decorator(self, name: str) -> Callable[[T], T]:
        """Return a decorator that registers the decorated object under ``name``."""

        def wrap(item: T) -> T:
            return self.register(name, item)

        return wrap

    def get(self, name: str) -> T:
        """Return the item registered under ``name``.

        Raises:
            UnknownNameError: With the closest registered name and the full list.
        """
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(did_you_mean(name, self._items, kind=self.kind)) from None

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._items)

    def items(self) -> list[tuple[str, T]]:
        """Registered (name, item) pairs in registration order."""
        return list(self._items.items())

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()!r})"
