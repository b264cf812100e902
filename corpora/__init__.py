"""Hub-ready dataset builders, one subpackage per released resource.

Each resource's build function registers itself in :data:`RESOURCES`::

    @RESOURCES.register("locus")
    def build(raw: Path | None = None, out: Path = Path("locus"), workers: int = 1, progress=None, *,
              population: Annotated[Path | None, typer.Option(help="...")] = None) -> BuildReport: ...

``raw``, ``out``, ``workers`` and ``progress`` are common to every builder; the keyword-only parameters after
them are the resource's own build options, which ``neurips26 build <resource> --help`` shows (from their
``Annotated[T, typer.Option(help=...)]`` annotations). The build modules are found through the
``neurips26.resources`` entry points (ours in ``pyproject.toml``, any other distribution's the same way) and imported
on the first lookup; adding a resource is one subpackage and one entry point.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neurips26.registry import Registry

RESOURCES: Registry[Callable[..., Any]] = Registry("resource", group="neurips26.resources")
