"""Hub-ready dataset builders, one subpackage per released resource.

Each resource's build function registers itself in :data:`RESOURCES`::

    @RESOURCES.register("tar")
    def build(raw=None, out=Path("tar"), workers=1, progress=None, *, embed_videos=False) -> Report: ...

Resource-specific options are keyword-only parameters annotated with ``typer.Option``.
The build modules are imported on the first lookup.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from neurips26.registry import Registry

RESOURCES: Registry[Callable[..., Any]] = Registry("resource", modules=(
    "neurips26.corpora.tar.build",
    "neurips26.corpora.clovr.build",
    "neurips26.methods.frameselect.tables",
    "neurips26.corpora._undecorated",
))


def builder(name: str) -> ModuleType:
    """The module of resource ``name``'s build function (its ``build`` is the function)."""
    return sys.modules[RESOURCES.get(name).__module__]
