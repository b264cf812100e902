"""One registry style for every pluggable thing: a decorator on the thing itself.

Resources, frame selectors, encoders, evaluators, answerers, benchmarks, metrics, LOCUS input
formats and unlearning methods are each kept in a :class:`Registry`. A component registers
itself where it is defined, as Inspect AI's ``@task`` or lm-eval's ``register_metric`` do::

    SELECTORS = Registry("selector")

    @SELECTORS.register("uniform", needs=())
    def uniform(pool, budget, rng): ...

    SELECTORS.get("uniform")        # the function
    SELECTORS.info("uniform")       # {"needs": ()}: keyword arguments given at registration
    SELECTORS.names()               # sorted names

A registry whose components live in modules that are expensive to import lists those modules
(``modules=``); they are imported on the first lookup, so importing the registry stays cheap.
:data:`ALL` lists every registry, so a test can walk them (each entry must be documented).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from .errors import UnknownNameError

T = TypeVar("T")

ALL: dict[str, Registry[Any]] = {}


class Registry(Generic[T]):
    """Named components of one kind."""

    def __init__(self, kind: str, *, modules: tuple[str, ...] = (),
                 check: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        """``kind`` names the components in messages; ``modules`` are imported on first lookup;
        ``check(name, info)`` may reject a registration's keyword arguments (raise ValueError)."""
        if kind in ALL:
            raise ValueError(f"a registry of {kind!r} exists already")
        self.kind = kind
        self._modules = modules
        self._loaded = not modules
        self._check = check
        self._items: dict[str, T] = {}
        self._info: dict[str, dict[str, Any]] = {}
        ALL[kind] = self

    def register(self, name: str, **info: Any) -> Callable[[T], T]:
        """Decorator: register the decorated object under ``name``, with ``info`` kept beside it."""
        if self._check is not None:
            self._check(name, info)

        def add(obj: T) -> T:
            if name in self._items and self._items[name] is not obj:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            self._info[name] = dict(info)
            return obj

        return add

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for module in self._modules:
                importlib.import_module(module)

    def get(self, name: str) -> T:
        """The component called ``name``; :class:`UnknownNameError` lists the known names."""
        self._load()
        if name not in self._items:
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return self._items[name]

    def info(self, name: str) -> dict[str, Any]:
        """The keyword arguments ``name`` was registered with."""
        self.get(name)
        return self._info[name]

    def names(self) -> list[str]:
        self._load()
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        return [(name, self._items[name]) for name in self.names()]

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load()
        return len(self._items)
