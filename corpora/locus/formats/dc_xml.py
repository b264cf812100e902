"""D.C. Code XML (DCCouncil/law-xml): one file per section, plus a title's ``index.xml``.

``dc-code-xml``: root ``<section>`` in the dc-library namespace with ``<num>``,
``<heading>``, ``<text>`` / nested ``<para>`` (each with its ``<num>`` label) and
``<annotations>`` (History, Cross References, ...).

``dc-code-index`` (companion): root ``<container>``; nested containers
(``<prefix>Chapter</prefix><num>1</num><heading>...``) ``xi:include`` the section
files. A section's path is the chain of containers above its include, read from
the nearest ``index.xml`` in an ancestor folder (parsed once per index).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from .base import FORMATS, SNIFF_BYTES, Folder, FormatError, Section, entity_warning, read_input

NS = "https://code.dccouncil.us/schemas/dc-library"
XI = "http://www.w3.org/2001/XInclude"
CODIFY = "https://code.dccouncil.us/schemas/codify"
INDEX_NAME = "index.xml"

_STATUS_BY_REASON = {"repealed": "repealed", "expired": "repealed", "transferred": "repealed",
                     "reserved": "reserved"}


def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True)


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _root_tag(head: bytes) -> str | None:
    """The root element's ``{namespace}name`` from the first bytes, or None when not XML."""
    parser = etree.XMLPullParser(events=("start",), resolve_entities=False, no_network=True)
    with contextlib.suppress(etree.XMLSyntaxError):  # the root's start event comes before any error
        parser.feed(head)
    return next((el.tag for _, el in parser.read_events()), None)


def _load(path: Path, folder: Folder | None = None) -> etree._Element:
    data = read_input(path)
    if folder is not None:
        entity_warning(path, data, folder)
    try:
        return etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        reason = re.sub(r",? line \d+, column \d+$", "", exc.msg or str(exc))
        raise FormatError(f"malformed XML at line {exc.lineno}: {reason}") from None


def _ws(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "")


def _inline(el: etree._Element) -> str:
    """Text of an inline element; an empty ``<span codify:value=" ">`` gives its value."""
    value = el.get(f"{{{CODIFY}}}value")
    parts = [value if value is not None and not el.text and not len(el) else el.text or ""]
    for child in el:
        if isinstance(child.tag, str):
            parts.append(_inline(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _lines(el: etree._Element) -> list[str]:
    """Lines of a text element: whitespace collapsed; a table gives one line per row, cells tab-separated."""
    parts = [_ws(el.text)]
    for child in el:
        if _local(child) == "table":
            rows = ("\t".join(" ".join(_inline(cell).split()) for cell in row if isinstance(cell.tag, str))
                    for row in child.iter(f"{{{NS}}}tr"))
            parts.append("\n" + "\n".join(rows) + "\n")
        elif isinstance(child.tag, str):
            parts.append(_ws(_inline(child)))
        parts.append(_ws(child.tail))
    lines = (re.sub(" +", " ", line).strip(" ") for line in "".join(parts).split("\n"))
    return [line for line in lines if line.strip()]


def _para_lines(para: etree._Element) -> list[str]:
    """A ``<para>`` in document order; its label (prefix, num, heading) leads its first line."""
    lines: list[str] = []
    label: list[str] = []

    def emit(new: list[str]) -> None:
        if new and label:
            new = [" ".join([*label, new[0]]), *new[1:]]
            label.clear()
        lines.extend(new)

    for child in para:
        tag = _local(child)
        if tag in ("prefix", "num", "heading"):
            if child.get("undesignated") != "true":  # editorial "(a)" not in the enacted text
                label.append(" ".join(_inline(child).split()))
        elif tag == "para":
            emit(_para_lines(child))
        elif tag:
            emit(_lines(child))
    emit([" ".join(label)] if label else [])
    return [line for line in lines if line]


def _status(reason: str, heading: str, text: str) -> str:
    if reason.lower() in _STATUS_BY_REASON:
        return _STATUS_BY_REASON[reason.lower()]
    for probe in (text, heading):
        if re.fullmatch(r"\[?(repealed|expired)\]?\.?", probe.strip(), re.I):
            return "repealed"
        if re.fullmatch(r"\[?reserved\]?\.?", probe.strip(), re.I):
            return "reserved"
    if re.search(r"\[(repealed|expired)\]", heading, re.I):
        return "repealed"
    return "reserved" if re.search(r"\[reserved\]", heading, re.I) else "active"


def _container_label(container: etree._Element) -> str:
    prefix, num, heading = (" ".join((container.findtext(f"{{{NS}}}{tag}") or "").split())
                            for tag in ("prefix", "num", "heading"))
    head = " ".join(p for p in (prefix, num) if p)
    return f"{head}. {heading}" if head and heading else f"{head}." if head else heading


def _index_entries(index: Path) -> dict[str, tuple[str, ...]]:
    """Resolved path of each included file -> the container labels above it; FormatError if malformed."""
    root = _load(index)
    if root.tag != f"{{{NS}}}container":
        raise FormatError(f"root element is <{_local(root)}>, not a D.C. Code <container>")
    base = str(index.resolve().parent)
    entries: dict[str, tuple[str, ...]] = {}

    def walk(container: etree._Element, chain: tuple[str, ...]) -> None:
        label = _container_label(container)
        chain = (*chain, label) if label else chain
        for child in container:
            if child.tag == f"{{{NS}}}container":
                walk(child, chain)
            elif child.tag == f"{{{XI}}}include" and child.get("href"):
                entries[os.path.normpath(os.path.join(base, child.get("href")))] = chain

    walk(root, ())
    return entries


@functools.lru_cache(maxsize=64)
def index_paths(index: Path) -> dict[str, tuple[str, ...]]:
    """Cached :func:`_index_entries`; a malformed index gives no paths (its own parse rejects it)."""
    try:
        return _index_entries(index)
    except FormatError:
        return {}


def _path_of(path: Path, folder: Folder) -> list[str]:
    """Containers above ``path`` in the nearest ancestor ``index.xml`` (up to the folder root)."""
    target = path.resolve()
    root = folder.root.resolve()
    for here in target.parents:
        if here != root and root not in here.parents:
            break
        index = here / INDEX_NAME
        if index.is_file():
            chain = index_paths(index).get(str(target))
            if chain is not None:
                return list(chain)
        if here == root:
            break
    return []


def _sniff_section(head: bytes, path: Path) -> bool:
    return _root_tag(head[:SNIFF_BYTES]) == f"{{{NS}}}section"


@FORMATS.register("dc-code-xml", sniff=_sniff_section, extensions=(".xml",))
def parse_section(path: Path, folder: Folder) -> Iterator[Section]:
    """The one section of a D.C. Code section file."""
    root = _load(path, folder)
    if root.tag != f"{{{NS}}}section":
        raise FormatError(f"root element is <{_local(root)}>, not a D.C. Code <section>")
    number = " ".join((root.findtext(f"{{{NS}}}num") or "").split())
    if not number:
        raise FormatError("section has no <num>")
    heading = " ".join((root.findtext(f"{{{NS}}}heading") or "").split())
    lines: list[str] = []
    history: list[str] = []
    cross_references: list[str] = []
    for child in root:
        tag = _local(child)
        if tag == "para":
            lines.extend(_para_lines(child))
        elif tag == "annotations":
            for note in child:
                kind = {"History": history, "Cross References": cross_references}.get(note.get("type") or "")
                text = " ".join(_inline(note).split()) if isinstance(note.tag, str) else ""
                if kind is not None and text:
                    kind.append(text)
        elif tag and tag not in ("num", "heading", "reason"):
            lines.extend(_lines(child))
    text = "\n".join(lines)
    reason = " ".join((root.findtext(f"{{{NS}}}reason") or "").split())
    section = Section(number, heading, text, _path_of(path, folder), history, cross_references,
                      _status(reason, heading, text))
    yield section


def _sniff_index(head: bytes, path: Path) -> bool:
    return _root_tag(head[:SNIFF_BYTES]) == f"{{{NS}}}container"


@FORMATS.register("dc-code-index", sniff=_sniff_index, extensions=(".xml",), companion=True)
def parse_index(path: Path, folder: Folder) -> Iterator[Section]:
    """Validate a title index; it yields no sections (section files read it for their path)."""
    _index_entries(path)
    yield from ()
