"""Base types of the raw ordinance-code formats: sections, folders, formats, detection.

One module per format (``dc_xml``, ``html_toc``, ``municode``, ``pdf``, ``tei``). Each module defines a
parser and registers it on :data:`FORMATS` with the decorator
``@FORMATS.register("municode-text", sniff=..., extensions=(".txt",))``; :func:`detect` picks the parser
from the file's content (the extension is only a hint used to order the candidates).

A parser receives the file and a :class:`Folder` (its jurisdiction folder, for companion files such as a
table of contents) and yields :class:`Section` objects in document order. It raises :class:`FormatError`
when the file turns out not to be what it claimed; the builder then rejects the whole file, so a file is
never half-parsed.

Companion formats (a JSON table of contents, the D.C. ``index.xml``) are registered with
``companion=True``: they are recognised and counted as parsed, yield no sections, and are read by the
parsers that need them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neurips26.errors import UserError
from neurips26.registry import Registry

STATUSES = ("active", "repealed", "reserved")
SNIFF_BYTES = 64 * 1024
MODULES = tuple(f"neurips26.corpora.locus.formats.{m}" for m in ("dc_xml", "html_toc", "municode", "pdf", "tei"))


class FormatError(UserError):
    """A file is not in the format its parser expects (the message says why)."""


@dataclass
class Section:
    """One section of a code, as a parser found it."""

    number: str
    heading: str
    text: str
    path: list[str] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    cross_references: list[str] = field(default_factory=list)
    status: str = "active"


@dataclass(eq=False)  # hashed by identity, so read_bytes can be cached per folder
class Folder:
    """A jurisdiction folder, with cached access to companion files."""

    root: Path

    @functools.cache  # noqa: B019 - one Folder per jurisdiction, short-lived
    def read_bytes(self, relative: str) -> bytes | None:
        path = self.root / relative
        return path.read_bytes() if path.is_file() else None


Parser = Callable[[Path, Folder], Iterator[Section]]
Sniffer = Callable[[bytes, Path], bool]


def _check(name: str, info: dict[str, Any]) -> None:
    if not callable(info.get("sniff")):
        raise ValueError(f"locus format {name!r}: sniff= must be a function (first bytes, path) -> bool")
    unknown = set(info) - {"sniff", "extensions", "companion"}
    if unknown:
        raise ValueError(f"locus format {name!r}: unknown option(s) {', '.join(sorted(unknown))}")


FORMATS: Registry[Parser] = Registry("locus format", modules=MODULES, check=_check)


@dataclass(frozen=True)
class Format:
    """A registered format: its parser and what :data:`FORMATS` keeps beside it."""

    name: str
    sniff: Sniffer  # True when the first bytes (up to SNIFF_BYTES) look like this format
    parse: Parser
    extensions: tuple[str, ...] = ()
    companion: bool = False


def get_format(name: str) -> Format:
    """The format registered as ``name`` (UnknownNameError lists the known ones)."""
    parse = FORMATS.get(name)
    return Format(name, parse=parse, **FORMATS.info(name))


def detect(path: Path) -> Format:
    """The format of ``path``, from its content; FormatError names why none fits."""
    head = path.read_bytes()[:SNIFF_BYTES] if path.stat().st_size else b""
    if not head.strip():
        raise FormatError("empty file")
    suffix = path.suffix.lower()
    candidates = sorted((get_format(name) for name in FORMATS.names()), key=lambda f: suffix not in f.extensions)
    for fmt in candidates:
        if fmt.sniff(head, path):
            return fmt
    if b"\x00" in head[:4096]:
        raise FormatError("binary content in no supported format")
    raise FormatError("content matches no supported format (" + ", ".join(FORMATS.names()) + ")")


def decode_text(data: bytes, path: Path) -> str:
    """Decode UTF-8 text (BOM allowed); FormatError when it is not valid UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not valid UTF-8 at byte {exc.start} of {path.name}") from None
