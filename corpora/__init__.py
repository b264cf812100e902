"""Hub-ready dataset builders, one subpackage per released resource.

Each resource subpackage exposes ``build(raw=None, out=..., workers=1, progress=None)``
returning a report; :data:`RESOURCES` maps the CLI name to that subpackage.
Adding a resource is one subpackage and one line here.
"""

from __future__ import annotations

import importlib
from types import ModuleType

RESOURCES: dict[str, str] = {
    "locus": "neurips26.corpora.locus.build",
    "tar": "neurips26.corpora.tar.build",
    "clovr": "neurips26.corpora.clovr.build",
    "rolebench_unlearn": "neurips26.corpora.rolebench_unlearn.build",
    "frameselect": "neurips26.corpora.frameselect.build",
}


def builder(name: str) -> ModuleType:
    """The build module of resource ``name``; ValueError lists the known ones."""
    if name not in RESOURCES:
        raise ValueError(f"unknown resource {name!r}; known: {', '.join(sorted(RESOURCES))}")
    return importlib.import_module(RESOURCES[name])
