"""City-published semantic HTML codes with JSON tables of contents (Spanish Fork City, UT).

``semantic-html``: one HTML file per title; each ``<section id>`` holds an ``<h3>``
catchline (``6.08.010 Definitions``) and ``<p>`` paragraphs. The real files are
messy, and the parser handles what they do:

- every section first appears as an empty stub (``<h3>`` only): a table of
  contents, not a section; a stub whose id never gets text is no section;
- ids repeat, some with trailing non-breaking spaces (``5_44_020\\xa0\\xa0``);
  copies of one id with the same heading collapse into the fullest copy (a copy
  whose paragraphs are all in another adds no text); copies with different
  headings (``8_20_010`` "Purpose, ..." and "Penalties") stay separate sections;
- the last paragraph of a chapter's last section is the next chapter's heading
  (``5.08 Auctioneers``): it is taken out of the text and becomes that chapter's
  name in ``path``.

``toc-json`` (companion): a title's ``{"title", "file", "sections": [{"id", "label"}]}``
or the master list ``[{"title", "file", "toc"}]``. :func:`toc_gaps` compares a
title with the table of contents it links to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import lxml.html
from lxml import etree

from .base import FORMATS, Folder, FormatError, Section, decode_text, read_input
from .encodeplus import sniff as encodeplus_sniff

_HTML = re.compile(rb"<!doctype\s+html|<html[\s>]", re.I)
_SECTION_TAG = re.compile(rb"<section\s[^>]*\bid\s*=", re.I)
_CATCHLINE = re.compile(r"(\d+(?:\.\d+)+[A-Za-z]?)\s*(.*)")
_CHAPTER_LINE = re.compile(r"(\d+\.\d+)\s+(\S.*)")
# Amendment notes, not provisions: "(Ord. No. 12-15, Repealed 06/16/2015)", "HISTORY", "Amended by Ord. ..."
_NOTE = re.compile(r"\(Ord\b.*\)|HISTORY|(?:Adopted|Amended|Repealed) by Ord\b.*", re.I)


def _clean(text: str | None) -> str:
    """Collapse whitespace, non-breaking spaces included."""
    return " ".join((text or "").split())


def _key(number: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", number))


@dataclass
class _Body:
    """One ``<section>`` element that has text."""

    id: str
    number: str
    heading: str
    paragraphs: list[str]


def _document(path: Path) -> lxml.html.HtmlElement:
    data = read_input(path)
    decode_text(data, path)  # a clear error for non-UTF-8 input
    try:
        return lxml.html.document_fromstring(data, parser=lxml.html.HTMLParser(encoding="utf-8"))
    except (etree.ParserError, ValueError) as exc:
        raise FormatError(f"unreadable HTML: {exc}") from None


def _read(path: Path) -> tuple[str, list[_Body], lxml.html.HtmlElement]:
    """The title (``<h1>``) and every ``<section>`` with text, in document order."""
    doc = _document(path)
    elements = doc.xpath("//section")
    if not elements:
        raise FormatError("no <section> elements")
    bodies = []
    for el in elements:
        paragraphs = [p for p in (_clean(p.text_content()) for p in el.iter("p")) if p]
        if not paragraphs:
            continue  # a table-of-contents stub
        sid = "".join((el.get("id") or "").split())
        h3 = el.find(".//h3")
        match = _CATCHLINE.fullmatch(_clean(h3.text_content() if h3 is not None else ""))
        if not match:
            raise FormatError(f"line {el.sourceline}: <section id={sid!r}> has text but no numbered <h3>")
        bodies.append(_Body(sid, match[1], match[2], paragraphs))
    if not bodies:
        raise FormatError(f"none of the {len(elements)} <section> elements has <p> text")
    h1 = doc.find(".//h1")
    return _clean(h1.text_content() if h1 is not None else ""), bodies, doc


def _take_chapter_names(bodies: list[_Body]) -> dict[str, str]:
    """Remove trailing next-chapter headings from the text; return chapter number -> name."""
    chapters_with_sections = {b.number.rsplit(".", 1)[0] for b in bodies}
    names: dict[str, str] = {}
    for body in bodies:
        match = _CHAPTER_LINE.fullmatch(body.paragraphs[-1])
        own = body.number.rsplit(".", 1)[0]
        if (len(body.paragraphs) > 1 and match and match[1] in chapters_with_sections
                and match[1].split(".")[0] == own.split(".")[0] and _key(match[1]) > _key(own)):
            names[match[1]] = match[2]
            body.paragraphs.pop()
    return names


def _collapse(bodies: list[_Body]) -> list[_Body]:
    """One body per (id, heading) when one copy's paragraphs contain the other's."""
    kept: list[_Body] = []
    for body in bodies:
        new = set(body.paragraphs)
        for i, old in enumerate(kept):
            if (old.id, old.heading) != (body.id, body.heading):
                continue
            if new <= set(old.paragraphs):
                break
            if set(old.paragraphs) <= new:
                kept[i] = body
                break
        else:
            kept.append(body)
    return kept


def _status(heading: str, paragraphs: list[str]) -> str:
    lowered = heading.lower()
    if "reserved" in lowered:
        return "reserved"
    if "repealed" in lowered:
        return "repealed"
    provisions = [p for p in paragraphs if not _NOTE.fullmatch(p)]
    if len(provisions) == 1 and re.match(r"\(?reserved\b", provisions[0], re.I):
        return "reserved"
    if len(provisions) == 1 and re.match(r"repealed\b", provisions[0], re.I):
        return "repealed"  # "Repealed 12-12-2023", "REPEALED by Ord. ..."
    if not provisions and re.search(r"\brepealed\b(?!.*reenact)", paragraphs[-1], re.I):
        return "repealed"  # only amendment notes, the last one a repeal
    return "active"


def _sections(path: Path) -> list[Section]:
    title, bodies, _ = _read(path)
    names = _take_chapter_names(bodies)
    sections = []
    for body in _collapse(bodies):
        chapter = body.number.rsplit(".", 1)[0] if body.number.count(".") >= 2 else ""
        chapter_label = f"Chapter {chapter} {names[chapter]}" if chapter in names else f"Chapter {chapter}"
        sections.append(Section(
            number=body.number,
            heading=body.heading,
            text="\n".join(body.paragraphs),
            path=[p for p in (title, chapter_label if chapter else "") if p],
            status=_status(body.heading, body.paragraphs),
        ))
    return sections


def _sniff_html(head: bytes, path: Path) -> bool:
    """HTML with ``<section id>`` elements, unless they are an enCodePlus page's nodes (``encodeplus-html``)."""
    return bool(_HTML.search(head) and _SECTION_TAG.search(head)) and not encodeplus_sniff(head, path)


@FORMATS.register("semantic-html", sniff=_sniff_html, extensions=(".html", ".htm", ".xhtml"))
def parse_html(path: Path, folder: Folder) -> Iterator[Section]:
    """Sections of one title, stubs skipped and repeated ids resolved (see the module doc)."""
    yield from _sections(path)


def _load_toc(data: bytes, path: Path) -> dict | list:
    """A validated table of contents (title object or master list); FormatError says what is wrong."""
    try:
        toc = json.loads(decode_text(data, path))
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if isinstance(toc, dict):
        entries, what, keys = toc.get("sections"), "sections", ("id", "label")
        if not isinstance(entries, list):
            raise FormatError("table of contents has no 'sections' list")
    elif isinstance(toc, list):
        entries, what, keys = toc, "master table of contents", ("title", "file", "toc")
    else:
        raise FormatError(f"table of contents is a JSON {type(toc).__name__}, not an object or a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise FormatError(f"{what} entry {i} is not an object")
        for key in keys:
            if not isinstance(entry.get(key), str):
                raise FormatError(f"{what} entry {i} has no string {key!r}")
    return toc


def _sniff_toc(head: bytes, path: Path) -> bool:
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    if '"$schema"' in text:
        return False  # a JSON Schema describes a format; it is not one
    if text.startswith("{"):
        return bool(re.search(r'"sections"\s*:\s*\[', text))
    return text.startswith("[") and all(f'"{key}"' in text for key in ("title", "file", "toc"))


@FORMATS.register("toc-json", sniff=_sniff_toc, extensions=(".json",), companion=True)
def parse_toc(path: Path, folder: Folder) -> Iterator[Section]:
    """Validate a table of contents; it yields no sections (:func:`toc_gaps` reads it)."""
    _load_toc(read_input(path), path)
    yield from ()


def toc_gaps(path: Path, folder: Folder) -> list[str]:
    """Messages for what the title's linked table of contents lists but the title has no text for."""
    _, bodies, doc = _read(path)
    link = next((el for el in doc.iter("link")
                 if (el.get("rel") or "").lower() == "alternate"
                 and (el.get("type") or "").lower() == "application/json" and el.get("href")), None)
    if link is None or re.match(r"[a-z][a-z0-9+.-]*:", link.get("href"), re.I):
        return []  # no local table of contents (never fetched over the network)
    href = link.get("href")
    toc_path = (path.parent / href).resolve()
    root = folder.root.resolve()
    if not toc_path.is_file() or (toc_path != root and root not in toc_path.parents):
        return [f"{path.name} links table of contents {href}, which is not in the folder"]
    try:
        toc = _load_toc(read_input(toc_path), toc_path)
    except FormatError as exc:
        return [f"{path.name} links table of contents {href}, which is unreadable: {exc}"]
    if not isinstance(toc, dict):
        return [f"{path.name} links {href}, a master table of contents, not the title's"]
    gaps = []
    if toc.get("file") and Path(str(toc["file"])).name != path.name:
        gaps.append(f"table of contents {href} describes {toc['file']}, not {path.name}")
    have = {body.id for body in bodies}
    reported = set()
    for entry in toc["sections"]:
        sid = "".join(entry["id"].split())
        if sid not in have and sid not in reported:
            reported.add(sid)
            gaps.append(f"toc lists {_clean(entry['label'])} but {path.name} has no text for it")
    return gaps
