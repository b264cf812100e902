"""Base types of the raw ordinance-code formats: sections, folders, formats, detection.

One module per format (``dc_xml``, ``encodeplus``, ``html_toc``, ``municode``, ``pdf``, ``tei``, ``word``). Each
module defines a parser and registers it on :data:`FORMATS` with the decorator
``@FORMATS.register("municode-text", sniff=..., extensions=(".txt",))``; :func:`detect` picks the parser
from the file's whole content (the extension is only a hint used to order the candidates): a sniffer gets
every byte, so a code whose front matter runs longer than any fixed head is still recognised. A sniffer that
only needs the start (an XML root, a magic number) looks at :data:`SNIFF_BYTES` itself.

A parser receives the file and a :class:`Folder` (its jurisdiction folder, for companion files such as a
table of contents, and :meth:`Folder.warn` for a record-level warning such as a recovered XML parse) and
yields :class:`Section` objects in document order. It raises :class:`FormatError` when the file turns out not
to be what it claimed; the builder then rejects the whole file, so a file is never half-parsed.

Companion formats (a JSON table of contents, the D.C. ``index.xml``) are registered with
``companion=True``: they are recognised and counted as parsed, yield no sections, and are read by the
parsers that need them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neurips26.errors import UserError
from neurips26.hubfolder import rawfiles
from neurips26.registry import Registry

STATUSES = ("active", "repealed", "reserved")
SNIFF_BYTES = 64 * 1024
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Compound File Binary (Word 97-2003, Excel, ...)


class FormatError(UserError):
    """A file is not in the format its parser expects (the message says why)."""


# --- text accounts --------------------------------------------------------------------------------
# Where every character of a code's text went: into a section, into recognised structure, or nowhere.
#
# A parser that assembles sections from text (:class:`.municode.Assembler`: the Municode text, Word, PDF and TEI
# formats) keeps a :class:`TextAccount` per file: the non-whitespace characters it read (``total``) and those it
# recognised as structure, by kind. The characters in sections are counted from the sections it returns
# (:func:`in_sections`: number, heading, text, history, cross-references), so ``unaccounted = total - in sections -
# structure`` is whatever the parser lost without recognising it: the build reports it per file and names the
# files that lose more than ``records.UNACCOUNTED_LIMIT``.
STRUCTURE_KINDS = (
    "front_matter",  # before the first section or heading line: cover, officials, preface, adopting ordinance
    "headings",  # title, chapter, article, division ... lines (they go to the sections' path)
    "notes",  # a heading's footnotes, editor's notes and references (they belong to no section)
    "toc",  # table-of-contents entries (a section line with no text whose number comes again)
    "section_syntax",  # a section line's prefix, separators and brackets (its number and heading are in it)
    "furniture",  # page numbers, running print headers and footers, list markers split from their text
    "back_matter",  # comparative and reference tables after the last section
)
SAMPLE_LINES = 3


def nonspace(text: str) -> int:
    """Non-whitespace characters of normalised text (single spaces, lines joined by ``\\n``)."""
    return len(text) - text.count(" ") - text.count("\n")


@dataclass
class TextAccount:
    """One file's characters: read, recognised as structure (by kind), and the first unaccounted lines."""

    total: int = 0
    in_sections: int = 0  # in the sections' number, heading, text, history, cross-references (:func:`in_sections`)
    structure: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STRUCTURE_KINDS, 0))
    lost: int = 0  # characters the parser saw and could place nowhere (also in the remainder below)
    sample: list[str] = field(default_factory=list)

    def add(self, kind: str, chars: int) -> None:
        self.structure[kind] += chars

    def lose(self, lines: Iterable[str]) -> None:
        """Lines that belong nowhere: counted, and the first ones kept as a sample."""
        for line in lines:
            self.lost += nonspace(line)
            if len(self.sample) < SAMPLE_LINES:
                self.sample.append(line[:160])

    @property
    def structure_total(self) -> int:
        return sum(self.structure.values())


def in_sections(sections: Iterable) -> int:
    """Non-whitespace characters of the sections' number, heading, text, history and cross-references."""
    return sum(nonspace(s.number) + nonspace(s.heading) + nonspace(s.text) + sum(map(nonspace, s.history))
               + sum(map(nonspace, s.cross_references)) for s in sections)


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
    warnings: list[tuple[Path, str]] = field(default_factory=list)  # (file, message), for the errors config
    accounts: dict[Path, TextAccount] = field(default_factory=dict)  # a parsed file's text account, if measured

    def warn(self, path: Path, message: str) -> None:
        """Record a record-level warning about ``path`` (the file is still used)."""
        self.warnings.append((path, message))

    @functools.cache  # noqa: B019 - one Folder per jurisdiction, short-lived
    def read_bytes(self, relative: str) -> bytes | None:
        path = self.root / relative
        return read_input(path) if path.is_file() else None


Parser = Callable[[Path, Folder], Iterator[Section]]
Sniffer = Callable[[bytes, Path], bool]


def _check(name: str, info: dict[str, Any]) -> None:
    if not callable(info.get("sniff")):
        raise ValueError(f"locus format {name!r}: sniff= must be a function (first bytes, path) -> bool")
    unknown = set(info) - {"sniff", "extensions", "companion"}
    if unknown:
        raise ValueError(f"locus format {name!r}: unknown option(s) {', '.join(sorted(unknown))}")


FORMATS: Registry[Parser] = Registry("locus format", group="neurips26.locus_formats", check=_check)


@dataclass(frozen=True)
class Format:
    """A registered format: its parser and what :data:`FORMATS` keeps beside it."""

    name: str
    sniff: Sniffer  # True when the file's content (all of it) looks like this format
    parse: Parser
    extensions: tuple[str, ...] = ()
    companion: bool = False


def get_format(name: str) -> Format:
    """The format registered as ``name`` (UnknownNameError lists the known ones)."""
    parse = FORMATS.get(name)
    return Format(name, parse=parse, **FORMATS.info(name))


def read_input(path: Path, data: bytes | None = None) -> bytes:
    """A raw file's bytes as the parsers read them: a file with a UTF-16 or UTF-32 byte-order mark as UTF-8 (an XML
    declaration's encoding rewritten to match, :func:`neurips26.hubfolder.rawfiles.as_utf8`); FormatError names
    where bytes stop being what their mark says."""
    try:
        return rawfiles.as_utf8(path.read_bytes() if data is None else data)
    except rawfiles.EncodingProblem as exc:
        raise FormatError(str(exc)) from None


def entity_warning(path: Path, data: bytes, folder: Folder) -> None:
    """Tell ``folder`` (an errors row) about the entities an XML file declares: they are never expanded."""
    if warning := rawfiles.entity_warning(data):
        folder.warn(path, warning)


def detect(path: Path, data: bytes | None = None) -> Format:
    """The format of ``path`` from its whole content (``data`` when already read); FormatError names why none
    fits and what the file looked like."""
    data = read_input(path, data)
    if not data.strip():
        raise FormatError("empty file")
    suffix = path.suffix.lower()
    candidates = sorted((get_format(name) for name in FORMATS.names()), key=lambda f: suffix not in f.extensions)
    for fmt in candidates:
        if fmt.sniff(data, path):
            return fmt
    raise FormatError(f"content matches no supported format ({', '.join(FORMATS.names())}); it looks like "
                      f"{describe(data)}")


_TITLE = re.compile(rb"<title[^>]*>\s*([^<]{1,80})", re.IGNORECASE)
_XML_ROOT = re.compile(rb"<([A-Za-z_][\w.:-]*)[\s>/]")


def describe(data: bytes) -> str:
    """What a file looks like, in a few words, for the report of a file no format understood."""
    head = data[:SNIFF_BYTES]
    if head.startswith(OLE2_MAGIC):
        return "an OLE2 compound file (Word 97-2003, Excel or similar) without a WordDocument stream"
    if head.startswith(b"PK\x03\x04"):
        return "a ZIP archive (not a Word .docx: no word/document.xml)"
    if head.startswith(b"%PDF-"):
        return "a PDF"
    if b"\x00" in head[:4096]:
        return f"binary data (first bytes {head[:8].hex(' ')})"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if re.match(r"(?:<!doctype html|<html)", text, re.IGNORECASE):
        title = _TITLE.search(head)
        return "an HTML page" + (f" titled {title[1].decode('utf-8', 'replace').strip()!r}" if title else "")
    if text.startswith("<"):
        roots = [m.decode() for m in _XML_ROOT.findall(head[:4096]) if not m.startswith((b"?", b"!"))]
        return f"XML with root <{roots[0]}>" if roots else "markup"
    if text.startswith(("{", "[")):
        return "JSON"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return f"text without a section line (`Sec. <number>. - <heading>`); first line {first[:80]!r}"


def decode_text(data: bytes, path: Path) -> str:
    """Decode UTF-8 text (BOM allowed); FormatError when it is not valid UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not valid UTF-8 at byte {exc.start} of {path.name}") from None
