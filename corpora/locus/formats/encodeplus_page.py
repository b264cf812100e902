"""Reading an enCodePlus page (see :mod:`.encodeplus`): the document, recovered when malformed, and its
``<section>`` nodes with their headings, depths and text, without the viewer's chrome."""

from __future__ import annotations

import re
from dataclasses import dataclass

import lxml.html
from lxml import etree

from .base import SNIFF_BYTES, FormatError
from .municode import normalize

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
_EFFECTIVE = re.compile(r"Effective on:\s*(\d{1,2})/(\d{1,2})/(\d{4})", re.IGNORECASE)
_PLACEHOLDER_YEAR = 1901  # the viewer's "Effective on: 1/1/1901" for an undated node


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


def document(data: bytes) -> tuple[lxml.html.HtmlElement, str | None]:
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


def page_root(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """``#thePage`` (the viewer's text), or the whole document when the page was saved without it."""
    found = root.xpath("//*[@id='thePage']")
    return found[0] if found else root


def _classes(el: etree._Element) -> set[str]:
    return set((el.get("class") or "").lower().split())


def _is_chrome(el: etree._Element) -> bool:
    return (el.tag in _CHROME_TAGS or (el.get("id") or "").lower() in _CHROME_IDS
            or bool(_classes(el) & _CHROME_CLASSES))


class Text:
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


def walk(el: etree._Element, out: Text, skip: etree._Element | None) -> None:
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
        walk(child, out, skip)
        if block:
            out.line_break()
        out.add(child.tail)


def _cell(cell: etree._Element) -> str:
    text = Text()
    text.add(cell.text)
    walk(cell, text, None)
    return " ".join(text.finish())


def _effective_date(notice: str, out: Text) -> None:
    m = _EFFECTIVE.search(notice)
    if m and int(m[3]) > _PLACEHOLDER_YEAR:
        out.effective.append(normalize(m.group()))


@dataclass
class Node:
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


def read_node(el: etree._Element) -> Node:
    """A ``<section>`` element as a :class:`Node`: heading, depth (``secLvlK``, else the heading tag, else the
    nesting) and own text."""
    heading_el = _first_heading(el)
    heading = ""
    if heading_el is not None:
        text = Text()
        text.add(heading_el.text)
        walk(heading_el, text, None)
        heading = _FOOTNOTE_MARK.sub("", " ".join(text.finish()))
    m = _LEVEL.search(el.get("class") or "")
    depth = sum(1 for a in el.iterancestors() if a.tag == "section") + 1
    level = int(m[1]) if m else int(heading_el.tag[1]) if heading_el is not None and heading else depth
    body = Text()
    body.add(el.text)
    walk(el, body, heading_el)
    secid = el.get("data-secid") or next(iter(_SECID.findall(el.get("id") or "")), "")
    where = f"line {el.sourceline}" + (f" (secid {secid})" if secid else "")
    return Node(where, heading, level, body.finish(), body.effective)


def breadcrumbs(root: etree._Element, nodes: list[Node]) -> list[str]:
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


def preview(lines: list[str]) -> str:
    """The start of some skipped text, quoted, for a warning."""
    text = " ".join(lines)
    return repr(text if len(text) <= 80 else text[:77] + "...")
