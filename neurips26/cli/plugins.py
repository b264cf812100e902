"""``neurips26 plugins``: every registered component, its kind and the distribution that provides it.

The registries are those named by the ``neurips26.registries`` entry points; each registry's components are found
through its own entry-point group (:mod:`neurips26.registry`), so another installed distribution's selectors,
resources or metrics are listed beside ours, under its own name.
"""

from __future__ import annotations

from typing import Annotated

import typer

from neurips26 import registry
from neurips26.errors import UserError
from neurips26.output import Format, FormatOpt, emit


def plugin_rows(kinds: list[str] | None = None) -> list[dict[str, str]]:
    """One row per registered component (kind, name, distribution, module), of ``kinds`` or of every
    registry; an unknown kind is a :class:`UserError` naming the known ones."""
    found = registry.registries()
    unknown = sorted(set(kinds or ()) - set(found))
    if unknown:
        raise UserError(f"--kind: unknown {', '.join(map(repr, unknown))}; known: {', '.join(sorted(found))}")
    rows = []
    for kind in sorted(kinds or found):
        rows += [{"kind": e.kind, "name": e.name, "distribution": e.distribution, "module": e.module}
                 for e in found[kind].entries()]
    return rows


def plugins(
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Only this registry kind (repeatable), e.g. "
                                                                   "'selector', 'resource', 'metric'.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """List every registered component (ours and those other installed packages add through entry points): its
    kind, name, the distribution that provides it and the module that registers it."""
    emit(plugin_rows(kind), fmt, title="registered components")
