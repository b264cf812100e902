"""One registry style for every pluggable thing: a decorator on the thing itself, found through entry points.

Resources, frame selectors, encoders, evaluators, answerers, benchmarks, metrics, LOCUS input
formats and unlearning methods are each kept in a :class:`Registry`. A component registers
itself where it is defined, as Inspect AI's ``@task`` or lm-eval's ``register_metric`` do::

    SELECTORS = Registry("selector", group="neurips26.selectors")

    @SELECTORS.register("uniform", needs=())
    def uniform(pool, budget, rng): ...

    SELECTORS.get("uniform")        # the function
    SELECTORS.info("uniform")       # {"needs": ()}: keyword arguments given at registration
    SELECTORS.names()               # sorted names

A registry finds its components through the Python entry points of its ``group``, declared in a
distribution's ``pyproject.toml`` (ours and anyone else's, the same way)::

    [project.entry-points."neurips26.selectors"]
    frameselect = "neurips26.methods.frameselect.selectors"   # a module: imported, its decorators register
    first_frame = "my_package.selectors:first_frame"           # module:object, registered as "first_frame"

The group's entries are read on the first lookup: a ``module`` entry is imported then, a ``module:object``
entry only when its name is looked up (its object is registered under the entry's name, unless importing
the module registered it there already). So importing a registry stays cheap, and no module of ours lists
the modules above it. :data:`ALL` lists every registry, so a test can walk them (each entry must be documented);
:meth:`Registry.entries` says which distribution provides each component (``neurips26 plugins``).
"""

from __future__ import annotations

import importlib.metadata as metadata
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import UnknownNameError, UserError

T = TypeVar("T")

ALL: dict[str, Registry[Any]] = {}
REGISTRIES_GROUP = "neurips26.registries"  # entry points naming every registry object ("module:OBJECT")


class PluginError(UserError):
    """An entry point of a registry's group that cannot be loaded (the message names it and its distribution)."""


@dataclass(frozen=True)
class Entry:
    """One registered component: its registry kind, name, the module that registered it, its distribution."""

    kind: str
    name: str
    module: str
    distribution: str


def _dist_name(point: metadata.EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return dist.name if dist is not None else "?"


def _load_point(point: metadata.EntryPoint, kind: str) -> Any:
    """``point.load()``; a failure is a :class:`PluginError` naming the entry point and its distribution."""
    try:
        return point.load()
    except Exception as exc:
        raise PluginError(f"{kind} entry point {point.name} = {point.value!r} (group {point.group}, distribution "
                          f"{_dist_name(point)}) failed to load: {type(exc).__name__}: {exc}") from exc


class Registry(Generic[T]):
    """Named components of one kind."""

    def __init__(self, kind: str, *, group: str,
                 check: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        """``kind`` names the components in messages; ``group`` is the entry-point group read on the first
        lookup; ``check(name, info)`` may reject a registration's keyword arguments (raise ValueError)."""
        if kind in ALL:
            raise ValueError(f"a registry of {kind!r} exists already")
        self.kind = kind
        self.group = group
        self._loaded = False
        self._check = check
        self._items: dict[str, T] = {}
        self._info: dict[str, dict[str, Any]] = {}
        self._module: dict[str, str] = {}  # the module each component was registered from
        self._lazy: dict[str, metadata.EntryPoint] = {}  # module:object entries not loaded yet
        ALL[kind] = self

    def register(self, name: str, **info: Any) -> Callable[[T], T]:
        """Decorator: register the decorated object under ``name``, with ``info`` kept beside it."""
        if self._check is not None:
            self._check(name, info)
        module = sys._getframe(1).f_globals.get("__name__", "?")

        def add(obj: T) -> T:
            if name in self._items and self._items[name] is not obj:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            self._info[name] = dict(info)
            self._module[name] = module
            return obj

        return add

    def points(self) -> list[metadata.EntryPoint]:
        """The entry points of this registry's group, in every installed distribution."""
        return list(metadata.entry_points(group=self.group))

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True  # first: a module loaded here may look names up while it registers
        try:
            for point in self.points():
                if point.attr:
                    if point.name not in self._items:
                        self._lazy.setdefault(point.name, point)
                else:
                    _load_point(point, self.kind)
        except PluginError:
            self._loaded = False  # every lookup fails the same way while the broken entry point is installed
            raise

    def _materialise(self, name: str) -> None:
        point = self._lazy.pop(name, None)
        if point is None:
            return
        obj = _load_point(point, self.kind)
        if name not in self._items:
            if self._check is not None:
                try:
                    self._check(name, {})
                except ValueError as exc:
                    raise PluginError(f"{self.kind} entry point {name} = {point.value!r}: {exc} (register it "
                                      "with the registry's decorator and point the entry at its module)") from exc
            self._items[name], self._info[name], self._module[name] = obj, {}, point.module
        elif self._items[name] is not obj:
            raise PluginError(f"{self.kind} {name!r} is registered twice (entry point {point.value!r})")

    def get(self, name: str) -> T:
        """The component called ``name``; :class:`UnknownNameError` lists the known names."""
        self._load()
        self._materialise(name)
        if name not in self._items:
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return self._items[name]

    def info(self, name: str) -> dict[str, Any]:
        """The keyword arguments ``name`` was registered with."""
        self.get(name)
        return self._info[name]

    def names(self) -> list[str]:
        """Every registered name, entry points not yet loaded included."""
        self._load()
        return sorted(set(self._items) | set(self._lazy))

    def items(self) -> list[tuple[str, T]]:
        return [(name, self.get(name)) for name in self.names()]

    def entries(self) -> list[Entry]:
        """Each component with the module that registered it and the distribution providing it (the
        distribution of the entry point whose module is, or contains, that module), loading no lazy entry."""
        names = self.names()
        points = sorted(self.points(), key=lambda p: len(p.module), reverse=True)
        holders: dict[str, list[str]] | None = None
        found = []
        for name in names:
            module = self._lazy[name].module if name in self._lazy else self._module.get(name, "?")
            point = next((p for p in points if module == p.module or module.startswith(p.module + ".")), None)
            if point is not None:
                dist = _dist_name(point)
            else:  # registered by a module no entry point names: the distribution holding its top package
                holders = metadata.packages_distributions() if holders is None else holders
                dist = holders.get(module.split(".")[0], ["?"])[0]
            found.append(Entry(self.kind, name, module, dist))
        return found

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


def registries() -> dict[str, Registry[Any]]:
    """Every registry, by kind: those named by the :data:`REGISTRIES_GROUP` entry points of every installed
    distribution (loaded here), and any other already imported."""
    for point in metadata.entry_points(group=REGISTRIES_GROUP):
        found = _load_point(point, "registry")
        if not isinstance(found, Registry):
            raise PluginError(f"registry entry point {point.name} = {point.value!r} (distribution "
                              f"{_dist_name(point)}) is not a Registry")
    return dict(ALL)
