"""What each line of a Municode-style text may be, found in one scan: page numbers and print headers (dropped as
page boilerplate), stray list markers (dropped), and the lines that may be section lines, headings or back matter
(checked one by one by :class:`.municode.Assembler`); every other line is text.

The Municode text, TEI and PDF parsers feed their text through :func:`classify_lines`: the lines are split and
normalised once (:func:`.lines.split_lines`), then one regular-expression scan over the joined text finds the
lines that are not plain text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .base import nonspace
from .lines import INVISIBLE, split_lines

HEADING_KINDS = {"part": 0, "title": 1, "chapter": 2, "appendix": 2, "article": 3, "artcile": 3,
                 "division": 4, "subdivision": 5}  # the words a heading starts with, and their levels (0: outermost)
HEADING_WORDS = "|".join(f"{k.upper()}|{k.capitalize()}" for k in HEADING_KINDS)  # PART|Part|TITLE|...

# Each (kind, first character, rest) below is what a line of that kind starts with; the first one listed that
# matches decides (section lines and headings are then checked with the full patterns of :mod:`.municode`). Each
# starts with one literal character or one character class, so that the regular-expression engine turns a line
# away by its first character without entering the alternative (about half the scan's time). Only that character
# is consumed (the rest is a lookahead, which may look at the line break after the line, as ``\s`` does), so the
# scan goes on at the next line.
_IN_PARENS = r"(?:\d{1,3}|[a-zA-Z]|[ivxlcIVXLC]{1,6})\)"  # a list marker's (a), (12), (iv) after its "("
_MARKER = rf"(?:\({_IN_PARENS}|\d{{1,3}}\.|[a-zA-Z]\.)"  # ... or 3., b.
_PAGE_OF = r" ?(?i:/|of) ?\d{1,5}$"  # the "/192" or " of 192" ending a page number
_BACK_MATTER_TITLES = ("COMPARATIVE TABLES?", "REFERENCE TABLE")
_BACK_MATTER_TITLE = rf"(?:{'|'.join(_BACK_MATTER_TITLES)})\b"
BACK_MATTER = re.compile(rf"(?:[A-Z]+ )*{_BACK_MATTER_TITLE}")  # the tables that end the last section
_SECTION_REST = r"ecs?\.? ?\d|ecs?\. |ections? |ECTIONS? "  # a section line's prefix after its "S"
_BY_LETTER: dict[str, list[str]] = {}  # PART|Part|... -> P: ART|art, ...
for _word in HEADING_KINDS:
    _BY_LETTER.setdefault(_word[0].upper(), []).extend([_word[1:].upper(), _word[1:]])
del _word
_LINE_STARTS = (
    ("page", "[Pp]", rf"(?i:age )\d{{1,5}}{_PAGE_OF}"),  # a page number: Page 7 of 192
    ("page", r"\d", rf"\d{{0,4}}{_PAGE_OF}"),  # 7/192, 7 of 192
    ("date", r"\d", r"\d?/\d{1,2}/\d{2,4},? \S.*$"),  # a dated print header (a browser's: date, time, title)
    ("furniture", "[ha]", r"(?:ttps?://|bout:blank)\S* \d{1,5}/\d{1,5}$"),  # a browser's footer: address, page
    ("marker", "•", rf"(?: ?{_MARKER})?$"),  # a list marker alone on its line
    ("marker", r"\(", rf"{_IN_PARENS}$"),
    ("marker", r"\d", r"\d{0,2}\.$"),
    ("marker", "[a-zA-Z]", r"\.$"),
    ("section", r"\[", rf"S(?:{_SECTION_REST})|§|\d+[A-Z]?\.\d+[A-Z]?\.\d"),  # may be a section line
    ("section", "S", _SECTION_REST),
    ("section", "§", ""),
    ("section", r"\d", r"\d*[A-Z]?\.\d+[A-Z]?(?:\.\d|\.? [-—–] |[—–]\d)"),
    ("special", r"\[", rf"(?:{HEADING_WORDS})\s"),  # may be a heading
    *(("special", letter, rf"(?:{'|'.join(rests)})\s") for letter, rests in _BY_LETTER.items()),
    ("special", "[IVXLC]", r"[IVXLC]*\s"),
    ("special", "[A-Z]", rf"[A-Z]* (?:[A-Z]+ )*{_BACK_MATTER_TITLE}"),  # BACK_MATTER after one word or more
    *(("special", title[0], rf"{title[1:]}\b") for title in _BACK_MATTER_TITLES),  # ... or none
)
LINE_KIND = re.compile(r"\n(?:" + "|".join(f"{first}(?={rest})()" for _, first, rest in _LINE_STARTS) + ")",
                        re.MULTILINE)
KIND_OF_GROUP = (None, *(kind for kind, _, _ in _LINE_STARTS))  # a match's kind: that of its one (empty) group
_ODD_SPACE = re.compile(r"[^\S\t\n]")  # a space in a section line other than " " and tab (en space, no-break space)
_PAGE = re.compile(r"(?i:page )?(?P<n>\d{1,5}) ?(?i:/|of) ?(?P<of>\d{1,5})")  # a page line's numbers


def _boilerplate(lines: list[str], pages: list[tuple[int, str, str]], dates: list[str]) -> set[str]:
    """Page headers and page numbers: ``n/N`` lines (line, n, N), the lines next to them, dated print headers."""
    totals = Counter(of for _, n, of in pages if int(n) <= int(of))
    common = {total for total, n in totals.items() if n >= max(2, int(total) // 2)}
    at = [i for i, _, of in pages if of in common]
    drop = {lines[i] for i in at}
    near = Counter(lines[j] for i in at for j in (i - 1, i + 1) if 0 <= j < len(lines))
    drop |= {line for line, n in near.items() if n >= max(2, len(at) // 2)}
    drop |= {line for line, n in Counter(dates).items() if n >= 3}
    drop.discard("")
    return drop


@dataclass
class Classified:
    """A text's lines (normalised; page furniture and stray list markers blanked) and what the scan found."""

    lines: list[str]
    special: list[int]  # lines that may be section lines, headings or back matter, in order
    candidates: list[int]  # of those, the ones that may be section lines
    total: int  # non-whitespace characters of the text
    furniture: int  # non-whitespace characters of the blanked lines


def classify_lines(text: str) -> Classified:
    """The lines of ``text`` (any line break, CR included), normalised, with page boilerplate and stray list
    markers blanked (``""``), and the indices of the lines that may be section lines, headings or back matter.
    A section line keeps its inner spacing: it tells a heading from text that ran into it.

    Each line is normalised once (:func:`.lines.split_lines`); everything else is one regular-expression scan of
    the joined lines (:data:`LINE_KIND`)."""
    split = split_lines(text)
    lines = split.lines
    found = [(m.start(), m.lastindex) for m in LINE_KIND.finditer(split.joined)]
    # a match starts at the "\n" before its line: the line's index, for all matches at once
    at = np.searchsorted(np.frombuffer(split.starts, np.int64), [start + 1 for start, _ in found]).tolist()
    pages, dates, markers, special, candidates = [], [], [], [], []
    for i, (_, group) in zip(at, found, strict=True):
        kind = KIND_OF_GROUP[group]
        if kind == "page":
            page = _PAGE.fullmatch(lines[i])
            pages.append((i, page["n"], page["of"]))
        elif kind == "date":
            dates.append(lines[i])
        elif kind in ("marker", "furniture"):
            markers.append(i)
        else:
            special.append(i)
            if kind == "section":
                candidates.append(i)
                raw = split.raw(i)
                if not raw.isprintable():  # (invisible characters and odd spaces are unprintable)
                    raw = _ODD_SPACE.sub(" ", INVISIBLE.sub("", raw))
                lines[i] = raw.strip()
    furniture = 0
    if drop := _boilerplate(lines, pages, dates):  # (printed exports only)
        blanked = [i for i, line in enumerate(lines) if line in drop]
        furniture += sum(nonspace(lines[i]) for i in blanked)
        for i in blanked:
            lines[i] = ""
    furniture += sum(nonspace(lines[i]) for i in markers)
    for i in markers:
        lines[i] = ""
    # the joined text holds one "\n" per line (before each) and single spaces
    total = len(split.joined) - split.joined.count(" ") - len(lines)
    return Classified(lines, special, candidates, total, furniture)
