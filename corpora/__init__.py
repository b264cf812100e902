"""Hub-ready dataset builders, one subpackage per released resource.

Each resource's build module registers its build function in :data:`RESOURCES`::

    @RESOURCES.register("locus")
    def build(raw: Path | None = None, out: Path = Path("locus"), workers: int = 1, progress=None, *,
              population: Annotated[Path | None, typer.Option(help="...")] = None) -> BuildReport: ...

``raw``, ``out``, ``workers`` and ``progress`` are common to every builder; the keyword parameters after them
are the resource's own build options, which ``neurips26 build <resource> --help`` shows (from their
``Annotated[T, typer.Option(help=...)]`` annotations). Adding a resource is one subpackage and one module
name in :data:`BUILD_MODULES`.
"""

from __future__ import annotations

from neurips26.registry import Registry

BUILD_MODULES = (
    "neurips26.corpora.locus.build",
    "neurips26.corpora.tar.build",
    "neurips26.corpora.clovr.build",
    "neurips26.corpora.rolebench_unlearn.build",
    "neurips26.corpora.frameselect.build",
    "neurips26.corpora.unregistered",  # transitional: registers build functions that do not register themselves
)

RESOURCES: Registry = Registry("resource", modules=BUILD_MODULES)
