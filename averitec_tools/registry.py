"""A small generic registry: unique names, metadata, and close-name suggestions.

Used for metrics, scoring profiles, datasets and pipeline stages, so that lookups
never need if/elif dispatch chains.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from averitec_tools.errors import UserError

T = TypeVar("T")


def close_names(name: str, known: Iterable[str], *, n: int = 3, cutoff: float = 0.5) -> list[str]:
    """The known names closest to ``name``, best first: the one did-you-mean matcher.

    Example:
        >>> close_names("hu-meter", ["all", "hu-meteor"])
        ['hu-meteor']
    """
    return difflib.get_close_matches(str(name), list(known), n=n, cutoff=cutoff)


class Registry(Generic[T]):
    """A name → object mapping that rejects duplicates and suggests close names.

    Args:
        kind: What is registered ("metric", "profile", "dataset"), used in messages.

    Example:
        >>> reg: Registry[int] = Registry("number")
        >>> reg.add("one", 1)
        >>> reg.get("one")
        1
        >>> reg.get("onee")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: unknown number 'onee' (did you mean: one?)
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    @staticmethod
    def of_names(kind: str, names: Iterable[str]) -> Registry[str]:
        """A registry of plain names (each registered once), for "did you mean" checks.

        Example:
            >>> Registry.of_names("metric", ["accuracy", "macro_f1", "accuracy"]).names()
            ['accuracy', 'macro_f1']
        """
        registry = Registry[str](kind)
        for name in dict.fromkeys(names):
            registry.add(name, name)
        return registry

    def add(self, name: str, item: T) -> None:
        """Register ``item`` under ``name``; a second registration of a name is a bug."""
        if name in self._items:
            raise ValueError(f"duplicate {self.kind} name {name!r}")
        self._items[name] = item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def deco(item: T) -> T:
            self.add(name, item)
            return item

        return deco

    def get(self, name: str) -> T:
        """Look ``name`` up, raising a :class:`UserError` with suggestions if unknown."""
        try:
            return self._items[name]
        except KeyError:
            raise UserError(self.unknown_message(name)) from None

    def suggest(self, name: str, *, n: int = 3, cutoff: float = 0.5) -> list[str]:
        """Registered names close to ``name`` (see :func:`close_names`)."""
        return close_names(name, self._items, n=n, cutoff=cutoff)

    def unknown_message(self, name: str) -> str:
        close = self.suggest(name)
        if close:
            return f"unknown {self.kind} {name!r} (did you mean: {', '.join(close)}?)"
        return f"unknown {self.kind} {name!r} (known: {', '.join(sorted(self._items))})"

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)


__all__ = ["Registry", "close_names"]
