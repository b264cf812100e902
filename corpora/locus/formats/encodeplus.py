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

import lxml.html
from lxml import etree

from .base import FORMATS, SNIFF_BYTES, Folder, FormatError, Section
from .municode import clean_heading, normalize
from .tei import RECOVERED

_MARKUP = re.compile(rb"(?:\xef\xbb\xbf)?\s*<")
_NODE_TAG = re.compile(rb"<section\b[^>]*?\b(?:id\s*=\s*[\"']?secid-\d|data-secid\s*=)", re.IGNORECASE)
_VIEWER = re.compile(rb"\bid\s*=\s*[\"']?thePage\b|\bsecLvl\d|encodeplus", re.IGNORECASE)
_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.IGNORECASE)

_CHROME_TAGS = frozenset({"head", "script", "style", "noscript", "template", "button", "nav", "select"})
_CHROME_IDS = frozenset({"sectionbanner", "pagecontrols", "toc-list"})
_CHROME_CLASSES = frozenset({"mini-toc", "caticon-ctnr", "archivenotice"})
_BLOCKS = frozenset({"address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt",
                     "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "ol",
                     "p", "pre", "table", "tbody", "tfoot", "thead", "tr", "ul"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_LEVEL = re.compile(r"\bseclvl(\d+)\b", re.IGNORECASE)
_SECID = re.compile(r"secid-(\d+)")
_FOOTNOTE_MARK = re.compile(r"\s*\[\d+\]$")  # a heading's footnote number, ``ADMINISTRATION[1]``

_LABEL = re.compile(r"(?:(?:\(?(?:\d{1,3}|[a-zA-Z]{1,2}|[ivxlcIVXLC]{1,6})[.)]|•)\s*)+")  # list labels alone
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
_EFFECTIVE = re.compile(r"Effective on:\s*(\d{1,2})/(\d{1,2})/(\d{4})", re.IGNORECASE)
_PLACEHOLDER_YEAR = 1901  # the viewer's "Effective on: 1/1/1901" for an undated node


def sniff(data: bytes, path: Path) -> bool:
    """Markup holding enCodePlus nodes (``<section id="secid-N">`` or ``data-secid``) and a mark of the viewer
    (``id="thePage"``, ``secLvlN`` classes or the encodeplus host), anywhere in the file."""
    return bool(_MARKUP.match(data) and _NODE_TAG.search(data) and _VIEWER.search(data))


@FORMATS.register("encodeplus-html", sniff=sniff, extensions=(".html", ".htm", ".aspx"))
def parse(path: Path, folder: Folder) -> Iterator[Section]:
    """Sections of an enCodePlus page, in document order (see the module doc)."""
    root, malformed = _document(path.read_bytes())
    page = _page(root)
    nodes = [_read_node(el) for el in page.iter("section")]  # a node inside chrome (an unclosed <p>) too
    if not nodes:
        raise FormatError("no <section> elements in the enCodePlus page (#thePage)")
    skipped: list[str] = []
    if page is not root:
        outside = _Text()
        outside.add(page.text)
        _walk(page, outside, None)
        if outside.finish():
            skipped.append(f"text of #thePage outside any <section> skipped: {_preview(outside.lines)}")
    sections = _assemble(nodes, _breadcrumbs(root, nodes), skipped)
    if not sections:
        raise FormatError(f"none of the {len(nodes)} <section> nodes has a numbered section heading "
                          "(`Sec. 1-1. - Heading.`, `Section 1-1: Heading`, `1.1.10 Heading`)")
    if malformed:
        folder.warn(path, f"{malformed}; read with lxml's recovering HTML parser ({RECOVERED})")
    for message in skipped:
        folder.warn(path, message)
    yield from sections


# --- reading the page -----------------------------------------------------------------------------------------

def _decode(data: bytes) -> tuple[str, str | None]:
    """The page's text: UTF-8 (BOM allowed), else the charset the page declares; bytes valid in neither are
    replaced (U+FFFD), with what was replaced as the second value."""
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        first = exc.start
    declared = _CHARSET.search(data[:SNIFF_BYTES])
    charset = declared[1].decode("ascii") if declared else ""
    if charset.lower().replace("_", "-") not in ("", "utf-8", "utf8"):
        try:
            return data.decode(charset), None
        except (LookupError, UnicodeDecodeError):
            pass
    text = data.decode("utf-8-sig", errors="replace")
    return text, f"{text.count(chr(0xFFFD))} invalid UTF-8 sequence(s) (first at byte {first}) replaced by U+FFFD"


def _document(data: bytes) -> tuple[lxml.html.HtmlElement, str | None]:
    """The parsed page and, when it was malformed, what was wrong (the first problem and how many more)."""
    text, bad_bytes = _decode(data)
    parser = lxml.html.HTMLParser(encoding="utf-8", recover=True, no_network=True)
    try:
        root = lxml.html.document_fromstring(text.encode("utf-8"), parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise FormatError(f"unreadable HTML: {exc}") from None
    problems = [bad_bytes] if bad_bytes else []
    problems += [f"line {e.line}: {e.message.strip()}" for e in parser.error_log
                 if e.level >= etree.ErrorLevels.ERROR]
    if re.search(r"<html\b", text, re.IGNORECASE) and not re.search(r"</html\s*>", text, re.IGNORECASE):
        problems.append("the file ends before </html> (cut off)")
    if not problems:
        return root, None
    more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
    return root, f"malformed HTML ({problems[0]}{more})"


def _page(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """``#thePage`` (the viewer's text), or the whole document when the page was saved without it."""
    found = root.xpath("//*[@id='thePage']")
    return found[0] if found else root


def _classes(el: etree._Element) -> set[str]:
    return set((el.get("class") or "").lower().split())


def _is_chrome(el: etree._Element) -> bool:
    return (el.tag in _CHROME_TAGS or (el.get("id") or "").lower() in _CHROME_IDS
            or bool(_classes(el) & _CHROME_CLASSES))


class _Text:
    """Lines of text gathered from a node's own markup, a list label joined to its item."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.effective: list[str] = []  # real "Effective on:" dates of archive notices
        self._parts: list[str] = []

    def add(self, text: str | None) -> None:
        if text:
            self._parts.append(text)

    def line_break(self) -> None:
        line = normalize("".join(self._parts))
        self._parts = [line, " "] if _LABEL.fullmatch(line) else []
        if line and not self._parts:
            self.lines.append(line)

    def finish(self) -> list[str]:
        if line := normalize("".join(self._parts)):
            self.lines.append(line)
        self._parts = []
        return self.lines


def _walk(el: etree._Element, out: _Text, skip: etree._Element | None) -> None:
    """Add the text of ``el``'s children to ``out``, in document order, without nested ``<section>`` nodes,
    viewer chrome and ``skip`` (the node's heading)."""
    for child in el:
        tag = child.tag
        if not isinstance(tag, str) or child is skip:  # a comment, a processing instruction, the heading
            out.add(child.tail)
            continue
        if tag == "section" or _is_chrome(child):
            if "archivenotice" in _classes(child):
                _effective_date(child.text_content(), out)
            out.line_break()
            out.add(child.tail)
            continue
        if tag == "tr":
            out.line_break()
            out.add(" | ".join(c for c in (_cell(td) for td in child if td.tag in ("td", "th")) if c))
            out.line_break()
            out.add(child.tail)
            continue
        block = tag in _BLOCKS
        if block:
            out.line_break()
        out.add(child.text)
        _walk(child, out, skip)
        if block:
            out.line_break()
        out.add(child.tail)


def _cell(cell: etree._Element) -> str:
    text = _Text()
    text.add(cell.text)
    _walk(cell, text, None)
    return " ".join(text.finish())


def _effective_date(notice: str, out: _Text) -> None:
    m = _EFFECTIVE.search(notice)
    if m and int(m[3]) > _PLACEHOLDER_YEAR:
        out.effective.append(normalize(m.group()))


@dataclass
class _Node:
    """One ``<section>`` of the page: its heading (empty when it has none), depth and own text."""

    where: str  # "line 12 (secid 2602)", for warnings
    heading: str
    level: int
    lines: list[str]
    effective: list[str]


def _first_heading(el: etree._Element) -> etree._Element | None:
    """The node's first ``<h1>``-``<h6>`` that is not inside a nested node or chrome."""
    for child in el:
        if not isinstance(child.tag, str) or child.tag == "section" or _is_chrome(child):
            continue
        if child.tag in _HEADINGS:
            return child
        if (found := _first_heading(child)) is not None:
            return found
    return None


def _read_node(el: etree._Element) -> _Node:
    heading_el = _first_heading(el)
    heading = ""
    if heading_el is not None:
        text = _Text()
        text.add(heading_el.text)
        _walk(heading_el, text, None)
        heading = _FOOTNOTE_MARK.sub("", " ".join(text.finish()))
    m = _LEVEL.search(el.get("class") or "")
    depth = sum(1 for a in el.iterancestors() if a.tag == "section") + 1
    level = int(m[1]) if m else int(heading_el.tag[1]) if heading_el is not None and heading else depth
    body = _Text()
    body.add(el.text)
    _walk(el, body, heading_el)
    secid = el.get("data-secid") or next(iter(_SECID.findall(el.get("id") or "")), "")
    where = f"line {el.sourceline}" + (f" (secid {secid})" if secid else "")
    return _Node(where, heading, level, body.finish(), body.effective)


def _breadcrumbs(root: etree._Element, nodes: list[_Node]) -> list[str]:
    """The page's trail above its first node (``Code of Ordinances > PART II - ...`` less the node itself)."""
    trails = [el for el in root.iter() if isinstance(el.tag, str) and "breadcrumbs" in _classes(el)
              and not any("breadcrumbs" in _classes(d) for d in el.iterdescendants() if isinstance(d.tag, str))]
    if not trails:
        return []
    links = [normalize(a.text_content()) for a in trails[0].iter("a")]
    crumbs = [c for c in (links or [normalize(p) for p in re.split(r"[>»›]", trails[0].text_content())]) if c]
    first = next((n.heading for n in nodes if n.heading), "")
    if crumbs and first and _same_title(crumbs[-1], first):
        crumbs.pop()
    return crumbs


def _same_title(a: str, b: str) -> bool:
    a, b = (re.sub(r"[^0-9a-z]+", "", s.lower()) for s in (a, b))
    return bool(a and b) and (a.endswith(b) or b.endswith(a))


def _preview(lines: list[str]) -> str:
    text = " ".join(lines)
    return repr(text if len(text) <= 80 else text[:77] + "...")


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


def _assemble(nodes: list[_Node], prefix: list[str], skipped: list[str]) -> list[Section]:
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
                skipped.append(f"{node.where}: text before any section heading skipped: {_preview(node.lines)}")
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
                           f"skipped: {_preview(node.lines)}")
        stack.append((node.level, node.heading))
    if open_ is not None:
        sections.append(_section(open_))
    return sections


def _closing_group(line: str) -> int | None:
    """Index of the ``(`` matching the ``)`` that ends ``line`` (None when it does not end with a group)."""
    if not line.endswith(")"):
        return None
    depth = 0
    for i in range(len(line) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(line[i], 0)
        if depth == 0:
            return i
    return None


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
        start = _closing_group(line)
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
