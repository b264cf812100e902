"""Hub-ready dataset builders, one subpackage per released resource.

Each resource's build function registers itself in :data:`RESOURCES`::

    @RESOURCES.register("locus")
    def build(raw: Path | None = None, out: Path = Path("locus"), workers: int = 1, progress=None, *,
              population: Annotated[Path | None, typer.Option(help="...")] = None) -> BuildReport: ...

``raw``, ``out``, ``workers`` and ``progress`` are common to every builder; the keyword-only parameters after
them are the resource's own build options, which ``neurips26 build <resource> --help`` shows (from their
``Annotated[T, typer.Option(help=...)]`` annotations). The build modules in :data:`BUILD_MODULES` are imported
on the first lookup; adding a resource is one subpackage and one line there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neurips26.registry import Registry

BUILD_MODULES = (
    "neurips26.corpora.locus.build",
    "neurips26.corpora.tar.build",
    "neurips26.corpora.clovr.build",
    "neurips26.corpora.rolebench_unlearn.build",
    "neurips26.corpora.fic.build",
    "neurips26.methods.frameselect.tables",  # built from tar and clovr by running the frame selectors
)

RESOURCES: Registry[Callable[..., Any]] = Registry("resource", modules=BUILD_MODULES)
