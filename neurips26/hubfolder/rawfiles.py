"""Walking a raw input folder: every file, and symbolic links judged, never followed out of the folder.

A raw folder may be assembled from several places: each entry at its top (a jurisdiction's folder, ``videos/``)
may itself be a link to a folder elsewhere. Below the top, a link is read only when its target is a regular file
inside the raw folder or inside one of those linked top-level folders; a link leaving them
(``../../etc/passwd``), a link to a folder and a broken link are listed too, so the builder rejects them with
:func:`refusal`'s reason instead of reading them or skipping them without a word. So are hidden names (``.notes``).

The bytes of a file that may be read go through :func:`as_utf8` (a UTF-16 or UTF-32 file with a byte-order mark is
read as UTF-8 text) and, for XML, :func:`entity_warning` (declared entities are never expanded, and that is said).
"""

from __future__ import annotations

import codecs
import functools
import os
import re
from pathlib import Path

from .shards import sha256_file


def walk(folder: Path) -> list[Path]:
    """Every regular file and every symbolic link under ``folder``, in path order; a hidden folder (``.git``) and
    a link to a folder are listed as one entry each, not descended into.

    Hidden names are inputs too: :func:`refusal` says why they are not read, so the builder counts and reports
    them (a file skipped without a word is a file the report cannot account for).
    """
    folder = Path(folder)
    found: list[Path] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        here = Path(top)
        found += [here / d for d in dirs if (here / d).is_symlink() or d.startswith(".")]
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [here / f for f in files if (here / f).is_symlink() or (here / f).is_file()
                  or f.startswith(".")]
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def hidden(path: Path, root: Path) -> bool:
    """Whether ``path`` or a folder between it and ``root`` has a hidden name (starting with ``.``)."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        parts = (Path(path).name,)
    return any(part.startswith(".") for part in parts)


def refusal(path: Path, root: Path) -> str | None:
    """Why ``path`` (found under the raw folder ``root``) is not read, or None when it may be read."""
    path = Path(path)
    if hidden(path, root):
        return ("hidden folder (its name starts with '.'): not read" if path.is_dir() and not path.is_symlink()
                else "hidden file (its name starts with '.'): not read; rename it to have it read")
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


# -- text encodings and XML entities of raw files -------------------------------------------------------------

# (BOM, encoding), longest first: the UTF-32 LE BOM begins with the UTF-16 LE one
BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_XML_DECLARATION = re.compile(rb"^(<\?xml[^>]*?encoding\s*=\s*)([\"'])[A-Za-z0-9._-]+\2")
_ENTITY = re.compile(rb"<!ENTITY\s+(%\s+)?([^\s>]+)\s+(SYSTEM|PUBLIC)?\s*(\"[^\"]*\"|'[^']*')", re.IGNORECASE)


class EncodingProblem(ValueError):
    """A file whose byte-order mark names an encoding its bytes are not in (the message says where)."""


def bom_encoding(data: bytes) -> str | None:
    """The encoding a byte-order mark at the start of ``data`` names (utf-8, utf-16-le/be, utf-32-le/be), or None."""
    return next((encoding for bom, encoding in BOMS if data.startswith(bom)), None)


def as_utf8(data: bytes) -> bytes:
    """``data`` as UTF-8 without a BOM when it starts with a UTF-8, UTF-16 or UTF-32 byte-order mark (an XML
    declaration's ``encoding=`` rewritten to match); other bytes unchanged. :class:`EncodingProblem` names the
    encoding and offset where the bytes stop being what the BOM says.

    Every parser of text and markup reads raw bytes through this, so a UTF-16 export (Windows tools write them with
    a BOM) is read as the text it is, not refused as "binary data"."""
    encoding = bom_encoding(data)
    if encoding is None:
        return data
    bom = next(b for b, e in BOMS if e == encoding)
    try:
        text = data[len(bom):].decode(encoding)
    except UnicodeDecodeError as exc:
        raise EncodingProblem(f"starts with a {encoding.upper()} byte-order mark but byte {exc.start + len(bom)} "
                              f"is not {encoding.upper()}") from None
    out = text.encode("utf-8", "surrogatepass")
    return _XML_DECLARATION.sub(rb"\g<1>\g<2>UTF-8\g<2>", out, count=1)


def entity_declarations(data: bytes) -> list[tuple[str, str]]:
    """(name, what) of every entity an XML document's DOCTYPE declares: ``what`` is ``SYSTEM 'file:///...'`` for an
    external entity (XXE: a reference would read that file or URL) or ``internal`` for a text substitution."""
    head = data[: data.find(b"]>") + 2] if b"<!DOCTYPE" in data[:1 << 20] and b"]>" in data else b""
    found = []
    for match in _ENTITY.finditer(head):
        name = match[2].decode("utf-8", "replace")
        kind = match[3].decode().upper() if match[3] else ""
        found.append((("%" if match[1] else "") + name,
                      f"{kind} {match[4].decode('utf-8', 'replace')}" if kind else "internal"))
    return found


def entity_warning(data: bytes) -> str | None:
    """What an XML parser must say about the entities a document declares (they are never expanded: external ones
    could read server files, and none is resolved by the parsers), or None when it declares none."""
    declared = entity_declarations(data)
    if not declared:
        return None
    external = [f"{name} ({what})" for name, what in declared if what != "internal"]
    internal = [name for name, what in declared if what == "internal"]
    parts = ([f"external entit{'y' if len(external) == 1 else 'ies'} {', '.join(external)} not read"]
             if external else []) + ([f"entit{'y' if len(internal) == 1 else 'ies'} {', '.join(internal)} not "
                                      "expanded"] if internal else [])
    return f"the DOCTYPE declares {'; '.join(parts)}: each reference (&name;) is left out of the text"
