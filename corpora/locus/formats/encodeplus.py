"""enCodePlus HTML (``encodeplus-html``): pages of the online.encodeplus.com code viewer, as Somerville, MA
publishes its Code of Ordinances (``/regs/somerville-ma-coo/``) and its zoning ordinance (``/regs/somerville-ma/``).

No enCodePlus page is in the project's data. What this parser relies on was read from public material about
the viewer: captured ``doc-view.aspx`` responses quoted in the tests of published enCodePlus scrapers (Fairfax
County, Loudoun County) and the markup those scrapers and Somerville scrapers address. The project's fixture
(``tests/fixtures/locus_encodeplus.html``) is written in that shape, so the parser is checked against the
documented structure, not against a Somerville page itself:

- the text sits in ``<div id="thePage" class="textPage" tocid=... secid=...>``; around it is viewer chrome
  that is never text: ``#pageControls`` (with the ``breadCrumbs``), the ``#toc-list`` table of contents,
  scripts;
- one ``<section id="secid-N" data-secid="N" class="secLvlK">`` per node of the code, in document order,
  siblings whose depth is ``K``; nested ``<section>`` elements are read too (depth from ``secLvlK``, else the
  heading tag ``hK``);
- a node's heading is its first ``<h1>``-``<h6>`` (the category icons ``span.caticon-ctnr`` dropped). Headings
  such as ``PART II - CODE OF ORDINANCES``, ``Chapter 2 - ADMINISTRATION``, ``ARTICLE 1`` are containers and
  go into ``path``; numbered headings are sections: ``Sec. 2-1. - Fiscal year.``, ``Section 1-1:
  Incorporation``, ``Secs. 1-4—1-10. - Reserved.``, the zoning's ``1.1.10 Text & Graphics``. A numbered node
  without text whose next node is deeper and numbered (``1.1 GENERAL`` above ``1.1.1 ...``) is a container;
- the text is the node's ``<p>``, ``div.li-cont`` items (a ``span.li-num`` label runs into its item) and tables
  (one line per row, cells joined by `` | ``). A node without a heading continues the open section (the viewer
  splits a section's lettered parts into nodes of their own), and so does an unnumbered heading deeper than it;
  ``div.mini-TOC`` and ``#sectionBanner`` are not text, nor is the ``p.archiveNotice`` date: ``Effective on:
  1/1/1901`` is the viewer's placeholder, a real date goes into ``history``;
- a paragraph that is a parenthesised citation (``(Ord. No. 2012-01, § 1, 1-26-2012)``, ``(Code 1969, § 2-1)``)
  is ``history``, ``Cross reference—`` / ``State law reference—`` paragraphs are ``cross_references``; the
  status comes from the heading or the first line (``Repealed``, ``Reserved``, a reserved range);
- the page's ``breadCrumbs`` above its first node start every ``path`` (a page can hold one part of a code).

Malformed HTML is read by lxml's recovering HTML parser with a record-level warning (marked ``recovered``, so a
twin in another format is preferred for what the repair lost); text that belongs to no section (a chapter's
editor's note, a preface under an unnumbered heading) is skipped with a warning naming it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .base import FORMATS, Folder, FormatError, Section, read_input
from .encodeplus_page import Node, Text, breadcrumbs, document, page_root, preview, read_node, walk
from .municode import clean_heading
from .section_notes import closing_group
from .tei import RECOVERED

_MARKUP = re.compile(rb"(?:\xef\xbb\xbf)?\s*<")
_NODE_TAG = re.compile(rb"<section\b[^>]*?\b(?:id\s*=\s*[\"']?secid-\d|data-secid\s*=)", re.IGNORECASE)
_VIEWER = re.compile(rb"\bid\s*=\s*[\"']?thePage\b|\bsecLvl\d|encodeplus", re.IGNORECASE)
_SEP = r"(?:\s*[-–—:]\s*|\s+|$)"
_NUMBER = r"[0-9A-Za-z]+(?:[.\-—–][0-9A-Za-z]+)*"
_SECTION_HEADING = re.compile(  # Sec. 2-1. - Fiscal year. / Section 1-1: Incorporation / § 10-4 ... / Secs. a—b.
    rf"\[?(?P<keyword>Secs?\.|Sections?|SECTIONS?|§§?)\s*(?P<number>{_NUMBER})\.?{_SEP}(?P<rest>.*)")
_DECIMAL_HEADING = re.compile(  # 1.1.10 Text & Graphics / 5100.2 Lot and Bulk / 1. INTRODUCTORY PROVISIONS
    rf"(?P<number>\d+[A-Za-z]?(?:\.\d+[A-Za-z]?)+|\d+[A-Za-z]?(?=\.))\.?{_SEP}(?P<rest>.*)")
_CONTAINER = re.compile(  # Chapter 2 - ..., ARTICLE I. - ..., PART II - ..., APPENDIX A - ...
    r"\[?(?i:part|subpart|title|subtitle|chapter|subchapter|article|division|subdivision|appendix)"
    r"\s+(?:\d[\w.\-]*|[IVXLCDM]+\b|[A-Z]\b)")
_HISTORY_START = re.compile(
    r"(?:Ords?\.|Ordinance|Code\b|Res\.|Resolution|Acts?\b|St\.|Stats?\.|Amd\.|Amend|Min\.|Minutes|Rev\.|C\.O\."
    r"|Prior code|Added|Amended|Adopted|Repealed)", re.IGNORECASE)
_CROSS_REFERENCE = re.compile(r"(?:Cross|State (?:law|constitution)|Charter) references?\s*[—–:-]",
                              re.IGNORECASE)


def sniff(data: bytes, path: Path) -> bool:
    """Markup holding enCodePlus nodes (``<section id="secid-N">`` or ``data-secid``) and a mark of the viewer
    (``id="thePage"``, ``secLvlN`` classes or the encodeplus host), anywhere in the file."""
    return bool(_MARKUP.match(data) and _NODE_TAG.search(data) and _VIEWER.search(data))


@FORMATS.register("encodeplus-html", sniff=sniff, extensions=(".html", ".htm", ".aspx"))
def parse(path: Path, folder: Folder) -> Iterator[Section]:
    """Sections of an enCodePlus page, in document order (see the module doc)."""
    root, malformed = document(read_input(path))
    page = page_root(root)
    nodes = [read_node(el) for el in page.iter("section")]  # a node inside chrome (an unclosed <p>) too
    if not nodes:
        raise FormatError("no <section> elements in the enCodePlus page (#thePage)")
    skipped: list[str] = []
    if page is not root:
        outside = Text()
        outside.add(page.text)
        walk(page, outside, None)
        if outside.finish():
            skipped.append(f"text of #thePage outside any <section> skipped: {preview(outside.lines)}")
    sections = _assemble(nodes, breadcrumbs(root, nodes), skipped)
    if not sections:
        raise FormatError(f"none of the {len(nodes)} <section> nodes has a numbered section heading "
                          "(`Sec. 1-1. - Heading.`, `Section 1-1: Heading`, `1.1.10 Heading`)")
    if malformed:
        folder.warn(path, f"{malformed}; read with lxml's recovering HTML parser ({RECOVERED})")
    for message in skipped:
        folder.warn(path, message)
    yield from sections


# --- nodes into sections --------------------------------------------------------------------------------------

@dataclass
class _Draft:
    number: str
    heading: str
    level: int
    path: list[str]
    is_range: bool
    lines: list[str] = field(default_factory=list)
    effective: list[str] = field(default_factory=list)


def _numbered(heading: str) -> tuple[str, str, bool] | None:
    """(number, heading text, whether it is a range like ``Secs. 1-4—1-10``) of a section heading."""
    if _CONTAINER.match(heading):
        return None
    m = _SECTION_HEADING.fullmatch(heading) or _DECIMAL_HEADING.fullmatch(heading)
    if not m or not re.search(r"\d", m["number"]):
        return None
    rest = m["rest"].strip()
    if heading.startswith("[") and rest.endswith("]"):
        rest = rest[:-1]
    is_range = "—" in m["number"] or "–" in m["number"] or m.groupdict().get("keyword") in ("Secs.", "§§")
    return m["number"], clean_heading(rest), is_range


def _assemble(nodes: list[Node], prefix: list[str], skipped: list[str]) -> list[Section]:
    """Walk the nodes in order: containers build the path, numbered nodes open sections, nodes without a
    heading (or with an unnumbered heading below the open section) continue it; other text is skipped."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    open_: _Draft | None = None
    for i, node in enumerate(nodes):
        if not node.heading:
            if open_ is not None:
                open_.lines += node.lines
                open_.effective += node.effective
            elif node.lines:
                skipped.append(f"{node.where}: text before any section heading skipped: {preview(node.lines)}")
            continue
        numbered = _numbered(node.heading)
        if numbered and not node.lines and i + 1 < len(nodes):
            after = nodes[i + 1]  # a numbered node without text over deeper numbered ones is their container
            if after.heading and after.level > node.level and (_numbered(after.heading)
                                                               or _CONTAINER.match(after.heading)):
                numbered = None
        subheading = numbered is None and not _CONTAINER.match(node.heading)
        if open_ is not None and subheading and node.level > open_.level:
            open_.lines += [node.heading, *node.lines]
            open_.effective += node.effective
            continue
        if open_ is not None:
            sections.append(_section(open_))
            open_ = None
        stack = [(level, h) for level, h in stack if level < node.level]
        if numbered:
            number, heading, is_range = numbered
            open_ = _Draft(number, heading, node.level, prefix + [h for _, h in stack], is_range,
                           list(node.lines), list(node.effective))
        elif node.lines:
            skipped.append(f"{node.where}: text under {node.heading!r}, which is not a numbered section, "
                           f"skipped: {preview(node.lines)}")
        stack.append((node.level, node.heading))
    if open_ is not None:
        sections.append(_section(open_))
    return sections


def _citation(group: str) -> str | None:
    """What a ``(Ord. No. 5, § 1, 1-1-2020)``-like group cites, or None when it is not a history note."""
    inner = group[1:-1].strip()
    return inner if _HISTORY_START.match(inner) and re.search(r"\d", inner) else None


def _section(draft: _Draft) -> Section:
    """History and cross-references taken out of the text; status from the heading and the first line."""
    text: list[str] = []
    history: list[str] = []
    references: list[str] = []
    for line in draft.lines:
        start = closing_group(line)
        cited = _citation(line[start:]) if start is not None else None
        if cited and start == 0:
            history.append(cited)
        elif cited and not _CROSS_REFERENCE.match(line):  # a history note run into the paragraph's end
            text.append(line[:start].rstrip())
            history.append(cited)
        elif _CROSS_REFERENCE.match(line):
            references.append(line)
        else:
            text.append(line)
    history += draft.effective
    status = _status(draft.heading, text, draft.is_range)
    body = "\n".join(text) if status != "reserved" or re.search("[A-Za-z]", "".join(text)) else ""
    return Section(number=draft.number, heading=draft.heading, text=body, path=draft.path, history=history,
                   cross_references=references, status=status)


def _status(heading: str, text: list[str], is_range: bool) -> str:
    words = heading.strip("[]() .").lower()
    first = text[0].lstrip("[(").lower() if text else ""
    if words.startswith(("repealed", "deleted", "rescinded")) or first.startswith(("repealed", "deleted")):
        return "repealed"
    if words.startswith("reserved") or first.startswith("reserved") or (is_range and not text):
        return "reserved"
    return "active"
