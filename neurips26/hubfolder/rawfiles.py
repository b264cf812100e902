"""Walking a raw input folder: every file, and symbolic links judged, never followed out of the folder.

A raw folder may be assembled from several places: each entry at its top (a jurisdiction's folder, ``videos/``)
may itself be a link to a folder elsewhere. Below the top, a link is read only when its target is a regular file
inside the raw folder or inside one of those linked top-level folders; a link leaving them
(``../../etc/passwd``), a link to a folder and a broken link are listed too, so the builder rejects them with
:func:`refusal`'s reason instead of reading them or skipping them without a word.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from .shards import sha256_file


def walk(folder: Path) -> list[Path]:
    """Every regular file and every symbolic link under ``folder`` (hidden names left out), in path order.

    Links to folders are listed, not descended into: :func:`refusal` says why they are not read.
    """
    folder = Path(folder)
    found: list[Path] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        here = Path(top)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [here / d for d in dirs if (here / d).is_symlink()]
        found += [here / f for f in files if not f.startswith(".")
                  and ((here / f).is_symlink() or (here / f).is_file())]
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def refusal(path: Path, root: Path) -> str | None:
    """Why ``path`` (found under the raw folder ``root``) is not read, or None when it may be read."""
    path = Path(path)
    if not path.is_symlink():
        return None if path.is_file() else "not a regular file"
    target = path.resolve()
    if not any(target.is_relative_to(r) for r in _roots(Path(root), Path(root).stat().st_mtime_ns)):
        return "symbolic link leading outside the raw folder: not read"
    if target.is_dir():
        return "symbolic link to a folder: not followed (copy or link the files themselves)"
    if not target.is_file():
        return "broken symbolic link" if not target.exists() else "symbolic link to something not a regular file"
    return None


@functools.lru_cache(maxsize=64)
def _roots(root: Path, mtime_ns: int) -> tuple[Path, ...]:
    """The raw folder and the folders its top-level links point to (cached while the top level is unchanged)."""
    linked = [p.resolve() for p in root.iterdir() if p.is_symlink() and p.is_dir()]
    return (root.resolve(), *linked)


def readable(folder: Path, root: Path | None = None) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(files that may be read, [(path, reason)] refused) under ``folder``, judged against ``root`` (default
    ``folder``)."""
    ok: list[Path] = []
    refused: list[tuple[Path, str]] = []
    for path in walk(folder):
        why = refusal(path, root if root is not None else folder)
        if why is None:
            ok.append(path)
        else:
            refused.append((path, why))
    return ok, refused


def digest(path: Path, root: Path) -> str:
    """sha256 of a file that may be read; "" for a refused one (its bytes are never read)."""
    return "" if refusal(path, root) else sha256_file(path)
