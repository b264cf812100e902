"""Georgia TEI markup of Municode codes (``tei-xml``), e.g. ``ga-muni-adairsville-code-full-markup.xml``.

``<text><body>`` holds ``<div type="cover-info">`` and ``<div type="preface">``
(front matter, skipped), ``<div type="charter">`` (and the related-laws /
special-acts divs) with the charter as ``<p>`` text, and ``<div type="code">``
with one ``<div type="chapter">`` per chapter: a ``<head>`` and ``<p>`` text. The
text is Municode's, one paragraph per line, with ``Sec.`` lines and article or
division headings inside; a div's ``<head>`` joins the path at its level and the
text goes through the same assembly as the plain-text export.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from .base import FORMATS, SNIFF_BYTES, Folder, FormatError, Section, TextAccount, entity_warning, read_input
from .municode import Assembler
from .section_lines import DASH_ONLY

TEI = "http://www.tei-c.org/ns/1.0"
FRONT_MATTER = {"cover-info", "preface", "front", "toc", "index"}
RECOVERED = "recovered"  # marks the warning of a recovered parse; the builder looks for it
_LEVEL_BY_TYPE = {"part": 0, "title": 1, "chapter": 2, "appendix": 2, "article": 3, "division": 4,
                  "subdivision": 5}


def _root_tag(head: bytes) -> str | None:
    """The root element's ``{namespace}name`` from the first bytes, or None when not XML."""
    parser = etree.XMLPullParser(events=("start",), resolve_entities=False, no_network=True)
    with contextlib.suppress(etree.XMLSyntaxError):  # the root's start event comes before any error
        parser.feed(head)
    return next((el.tag for _, el in parser.read_events()), None)


def sniff(head: bytes, path: Path) -> bool:
    return _root_tag(head[:SNIFF_BYTES]) == f"{{{TEI}}}TEI"


def _load(path: Path, folder: Folder) -> tuple[etree._Element, str | None]:
    """The document's root; malformed XML (a bare ``&``, a stray tag, a cut-off end) is read again with
    lxml's recovering parser and a record-level warning, since one bad character must not cost a whole code.
    Returns the root and, for a recovered parse, what was malformed. The builder then prefers a text twin's
    version of any section the recovery lost (see ``corpora/locus/twins.py``)."""
    data = read_input(path)
    entity_warning(path, data, folder)
    try:
        return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True)), None
    except etree.XMLSyntaxError as exc:
        where = f"malformed XML at line {exc.lineno}: " + re.sub(r",? line \d+, column \d+$", "", exc.msg or str(exc))
    root = etree.fromstring(data, etree.XMLParser(recover=True, resolve_entities=False, no_network=True))
    if root is None:
        raise FormatError(f"{where} (nothing recoverable)")
    return root, where


def _walk(div: etree._Element, assembler: Assembler) -> None:
    """Feed one div's head, paragraphs and nested divs to the assembler, in document order."""
    for child in div:
        if not isinstance(child.tag, str):
            continue
        name = etree.QName(child).localname
        if name == "head":
            assembler.heading(child.xpath("string()"), _LEVEL_BY_TYPE.get(div.get("type", ""), 2))
        elif name == "div":
            if child.get("type") not in FRONT_MATTER:
                _walk(child, assembler)
        else:  # <p>, <ab>, <list>, ...: text that holds Sec. lines
            assembler.feed_text(child.xpath("string()"))


@FORMATS.register("tei-xml", sniff=sniff, extensions=(".xml",))
def parse(path: Path, folder: Folder) -> Iterator[Section]:
    """Sections of a TEI-XML code (see the module doc)."""
    root, malformed = _load(path, folder)
    try:
        sections, account = _sections(root)
    except FormatError as exc:
        raise FormatError(f"{malformed}; after recovery: {exc}" if malformed else str(exc)) from None
    if malformed:
        folder.warn(path, f"{malformed}; read with a recovering XML parser ({RECOVERED})")
    folder.accounts[path] = account
    yield from sections


def _sections(root: etree._Element) -> tuple[list[Section], TextAccount]:
    if root.tag != f"{{{TEI}}}TEI":
        raise FormatError(f"root element is {etree.QName(root).localname}, not TEI")
    body = root.find(f"{{{TEI}}}text/{{{TEI}}}body")
    if body is None:
        raise FormatError("TEI without <text><body>")
    assembler = Assembler(DASH_ONLY)
    _walk(body, assembler)
    return assembler.finish(), assembler.account
