"""Municode full-text exports (``municode-text``): ``Sec. N. - Heading.`` lines and their text.

Two flavours reach us, and :func:`sections_from_text` reads both:

- one record per section (Adairsville, Arcade, Athens-Clarke): ``Sec. 1-1.11. -
  Corporate boundaries.`` then the paragraphs, separated by bare carriage returns
  inside a CRLF record. When the carriage returns are lost the heading runs into
  the text (``... boundaries. (a)  The ...``) and :func:`split_heading` finds the
  boundary;
- PDF dumps (Baldwin County, Edison, Fairmount): the ``Sec.`` line, then wrapped
  text lines, with page boilerplate (``5/9/2019 Edison, GA Code of Ordinances``,
  ``7/192``) and stray list markers (``(a)`` alone on a line) to drop.

Rules: section lines follow one grammar (:mod:`.section_lines`: ``Sec. 1-5.11. - ``, ``Section 2.11 - ``,
``§ 5-1<tab>``, ``2.12.010 - ``, ``Secs. 2-3—2-22. - Reserved.`` as one reserved section, and in a file written
that way ``Sec. 5-1. Heading``); which styles make sections is decided per file from all its lines, and a table of
contents is set aside. Lines before the first section or heading line are front matter. Heading lines (``PART II -
...``, ``Chapter 2 - ...``, ``ARTICLE IV. - ...``, ``Article II. - Licensing``) build ``path``; the footnotes and
notes that follow a heading belong to no section, and other text under a heading that no section line starts is a
section numbered by the heading (``Appendix A``). Parenthesised ordinance/code citations become ``history``;
``Cross reference—`` and ``State Law reference—`` paragraphs become ``cross_references`` (:mod:`.section_notes`).
Comparative tables and the state-law reference table at the back end the last section. Every character read
is accounted for (:class:`.base.TextAccount`): in a section, in recognised structure, or lost; a line that starts
like a section line of an unknown style (``Sec 5-1 :: Heading``) is never let into a section's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import chain
from operator import attrgetter
from pathlib import Path

from . import section_lines
from .base import FORMATS, Folder, FormatError, Section, TextAccount, decode_text, nonspace, read_input
from .line_kinds import BACK_MATTER, HEADING_KINDS, HEADING_WORDS, classify_lines
from .lines import normalize
from .section_lines import NEAR_MISS, FileStyles
from .section_notes import CROSS_REF, OpenSection, close_section

_SNIFF = re.compile(  # where a section line may start, in the file's bytes (U+00A0 is \xc2\xa0 in UTF-8)
    rb"(?:^|[\r\n])(?:[ \t]|\xc2\xa0)*"
    rb"(?=\[?(?:Secs?\.?\s?\d|Secs?\.|Sections? |SECTIONS? |\xc2\xa7|\d+[A-Z]?\.\d+[A-Z]?\.\d))")
_MARKUP_START = re.compile(rb"(?:\xef\xbb\xbf|[ \t\r\n])*<")
_REST_OF_LINE = re.compile(rb"[^\r\n]*")
_NUM = r"[0-9A-Za-z]+(?:[.\-][0-9A-Za-z]+)*"
HEADING_LINE = re.compile(  # ARTICLE IV. - TITLE / [ARTICLE VIII.] - TITLE / CHAPTER 2-1. - TITLE
    rf"\[?(?P<kind>{HEADING_WORDS}) (?P<num>{_NUM})\.?\]? - (?P<title>\S.*)")
_BARE_HEADING = re.compile(rf"(?P<kind>ARTICLE|DIVISION|CHAPTER) - (?P<num>{_NUM})\.?")  # title on next line
_ROMAN_HEADING = re.compile(r"(?P<num>[IVXLC]+) - - (?P<title>[^a-z]+)")  # Edison's appendix articles
_HEADING_START = re.compile(  # what every heading line starts with: a cheap test before the full ones
    rf"[\s\u00a0\u200b\ufeff]*(?:\[?(?:{HEADING_WORDS})\s|(?:ARTICLE|DIVISION|CHAPTER)\s|[IVXLC]+\s)")
_FOOTNOTE_TAIL = re.compile(r"\s*(?:\[\d+\]|Footnotes:|FOOTNOTE\(S\):|(?<=\S) Sec\.\s\d).*$")

_LOWER = re.compile("[a-z]")
_TITLE_CASE = re.compile(r"[A-Z][^.;:,!?]{0,80}\.?")  # a heading's title in title case: short, no sentence in it


# Heading/text boundary in a one-line section: a period (or colon) followed by
# the end, an indent, a list marker or a history note ("strong"), or a period
# followed by a capitalised word that does not close an abbreviation ("weak").
_BOUNDARY = re.compile(r"[.:]\]?(?=\s|$)")
_STRONG_TAIL = re.compile(
    r"\s*$|\s{2,}|\s(?:\((?:[a-zA-Z]{1,4}|\d{1,3})\)|[a-zA-Z]\.|\d+(?:\.\d+)+\.?)(?:\s|$)"
    r"|\s\((?:Ord|Code|Res|Amd|Min)\b")
_WEAK_TAIL = re.compile(r"\s(?![a-z,;:)])\S")
_ABBREVIATION = re.compile(
    r"(?:\b(?:Sec|Secs|No|Nos|Co|Inc|Corp|Ltd|Jr|Sr|St|Dr|Mt|Ft|vs|Ch|Art|Arts|Div|Ord|Res|Min|Amd|Par"
    r"|Para|Subd|seq|al|approx|Dept|Govt|Ga|Supp)|(?<![\w.])[A-Za-z](?:\.[A-Za-z])*|\b[A-Z]{1,3}-\d+[A-Z]?)\.$")
_KEEP_FINAL_PERIOD = ("etc.", "Inc.", "Co.", "Corp.", "Ltd.", "Jr.", "Sr.", "No.", "seq.")


def split_heading(rest: str) -> tuple[str, str]:
    """Split what follows ``Sec. N. - `` into (heading, text that ran into the same line)."""
    rest = rest.rstrip()
    for m in _BOUNDARY.finditer(rest):
        end, tail = m.end(), rest[m.end():]
        if _STRONG_TAIL.match(tail):
            return rest[:end], tail
        if m.group().startswith(".") and _WEAK_TAIL.match(tail) and not _abbreviation(rest[:end]):
            return rest[:end], tail
    return rest, ""


def _abbreviation(head: str) -> bool:
    """Whether ``head`` ends with an abbreviation (:data:`_ABBREVIATION`). A match holds no space, so it lies in
    the last word of ``head``: the search starts there (its lookbehinds still see the character before)."""
    last = head.rsplit(None, 1)
    return _ABBREVIATION.search(head, len(head) - len(last[-1]) if last else 0) is not None


def clean_heading(heading: str) -> str:
    """A section heading as stored: spaces normalised, the final period dropped (``etc.`` keeps it)."""
    heading = normalize(heading)
    if heading.endswith(".") and not heading.endswith(_KEEP_FINAL_PERIOD):
        heading = heading[:-1].rstrip()
    return heading


def heading_level(line: str) -> tuple[int, str] | None:
    """(level, cleaned text) when ``line`` is a PART/Chapter/ARTICLE/... heading (0 = outermost)."""
    if not _HEADING_START.match(line):
        return None
    line = _FOOTNOTE_TAIL.sub("", normalize(line))
    if len(line) > 300:
        return None
    if m := HEADING_LINE.fullmatch(line):
        kind = m["kind"].lower()
        if kind == "subdivision" or not _LOWER.search(m["title"]) or _TITLE_CASE.fullmatch(m["title"]):
            return HEADING_KINDS[kind], line  # titles in capitals, or a short title-case one (`Licensing`)
        return None
    if m := _BARE_HEADING.fullmatch(line):
        return HEADING_KINDS[m["kind"].lower()], line
    if m := _ROMAN_HEADING.fullmatch(line):
        return HEADING_KINDS["article"], line
    return None




# Where the text outside any section goes: before the first section or heading line (front matter), after a
# heading (its notes), after the back-matter tables, or after a line that starts like a section line of an
# unknown style (lost: never let into a section's text, never called structure).
FRONT, AFTER_HEADING, BACK, LOST = "front", "after heading", "back", "lost"
_NOTE_BLOCK = re.compile(r"Footnotes?:|FOOTNOTE\(S\):|-{2,} ?\(\d+\) ?-{2,}")  # a heading's footnotes begin
_HEADING_TAIL = re.compile(r"[\[(]?(?:RESERVED|Reserved|REPEALED|Repealed|DELETED|Deleted)[\])]?\.?")
_NOTE_LINE = re.compile(  # one note of a heading: editor's note, references, its history
    rf"(?:Editor'?s'? [Nn]otes?|Note|{CROSS_REF})|\((?:Ords?\.|Ordinance|Code|Res\.|Amd\.)")


class Assembler:
    """Turns a stream of headings and lines into sections (shared by the text, TEI and PDF parsers), and accounts
    for every character it reads (:attr:`account`).

    ``styles``: the section-line styles of the whole file (:func:`.section_lines.file_styles`); by default each
    text given to :meth:`feed_text` decides its own (the text formats feed the whole file at once)."""

    def __init__(self, styles: FileStyles | None = None) -> None:
        self.path: list[tuple[int, str]] = []
        self.sections: list[Section] = []
        self.account = TextAccount()
        self._styles = styles
        self._open: OpenSection | None = None
        self._untitled = False  # the last heading (``ARTICLE - V.``) takes its title from the next line
        self._outside = FRONT  # where text outside a section goes
        self._notes = False  # inside a heading's footnote block
        self._section_lines: list[str] = []  # as read, and what of them is in the sections: for section_syntax
        self._numbers: list[str] = []
        self._headings: list[str] = []
        self._spills: list[str] = []

    def heading(self, text: str, level: int | None = None) -> None:
        """A heading given apart from the text (TEI div heads); ``level`` overrides the level read from it."""
        text = normalize(text)
        self.account.total += nonspace(text)
        self._heading(text, heading_level(text), level)

    def _heading(self, text: str, found: tuple[int, str] | None, level: int | None = None) -> None:
        """A heading line (normalised), ``found`` its :func:`heading_level`."""
        entry = found[1] if found else _FOOTNOTE_TAIL.sub("", text).strip()
        level = level if level is not None else found[0] if found else len(self.path)
        self.account.add("headings", nonspace(text))
        self._close()
        self.path = [(lv, h) for lv, h in self.path if lv < level] + [(level, entry)]
        self._untitled = bool(_BARE_HEADING.fullmatch(entry))
        self._outside, self._notes = AFTER_HEADING, False

    def feed_text(self, text: str) -> None:
        """Take a text (any number of lines). Only the lines :func:`classify_lines` marks are looked at one by
        one; the runs of text between them go to the open section whole."""
        classified = classify_lines(text)
        lines, special = classified.lines, classified.special
        self.account.total += classified.total
        self.account.add("furniture", classified.furniture)
        candidates = set(classified.candidates)  # raw lines: the others are normalised already
        headings = {i: found for i in special if i not in candidates and (found := heading_level(lines[i]))}
        if (styles := self._styles) is None:
            structural = [i for i in special if i in candidates or i in headings]
            styles = section_lines.file_styles(lines, classified.candidates, structural)
        starts = styles.starts(lines, classified.candidates)
        start = 0
        for i in special:
            line = lines[i]
            if not line:  # boilerplate after all
                continue
            self._text(lines[start:i])
            start = i + 1
            if m := starts.get(i):
                self._start(m, line)
            elif i in styles.toc:
                self._close()
                self.account.add("toc", nonspace(normalize(line)))
            elif level := headings.get(i) or (heading_level(line) if i in candidates else None):
                self._heading(normalize(line) if i in candidates else line, level)
            elif BACK_MATTER.match(line):
                self._close()
                self.account.add("back_matter", nonspace(line))
                self._outside = BACK
            elif NEAR_MISS.match(line) and not section_lines.match(line):
                self._close()
                self._outside = LOST
                self.account.lose([normalize(line)])
            else:
                self._text([normalize(line)])
        self._text(lines[start:])

    def _text(self, lines: list[str]) -> None:
        """Lines of text (blank ones skipped): the open section's, else placed by :attr:`_outside`."""
        lines = list(filter(None, lines))
        if not lines:
            return
        if self._open is not None:
            if self._open.unnumbered and (end := next((k for k, line in enumerate(lines) if _NOTE_BLOCK.match(line)),
                                                     None)) is not None:  # the heading's footnotes end its text
                self._open.lines.extend(lines[:end])
                self._close()
                self._outside, self._notes = AFTER_HEADING, True
                self.account.add("notes", sum(map(nonspace, lines[end:])))
                return
            self._open.lines.extend(lines)
            return
        if self._untitled:
            title = next((line for line in lines if not _LOWER.search(line)), None)
            if title is not None:
                level, entry = self.path[-1]
                self.path[-1] = (level, f"{entry} {title}")
                self._untitled = False
                self.account.add("headings", nonspace(title))
                lines.remove(title)
        if self._outside == FRONT:
            self.account.add("front_matter", nonspace("\n".join(lines)))
        elif self._outside == BACK:
            self.account.add("back_matter", nonspace("\n".join(lines)))
        elif self._outside == LOST:
            self.account.lose(lines)
        else:  # after a heading: its footnotes and notes are structure; text is a section of the heading's own
            for k, line in enumerate(lines):
                self._notes = self._notes or bool(_NOTE_BLOCK.match(line))
                if _HEADING_TAIL.fullmatch(line) and not self._notes:
                    self.account.add("headings", nonspace(line))
                elif self._notes or _NOTE_LINE.match(line):
                    self.account.add("notes", nonspace(line))
                else:
                    self._unnumbered(lines[k:])
                    return

    def _unnumbered(self, lines: list[str]) -> None:
        """Text under a heading that no section line starts (an appendix's fee schedule, an article's preamble):
        a section numbered by its heading (``Appendix A``), without a catchline (the heading is in its path)."""
        entry = self.path[-1][1] if self.path else ""
        if m := HEADING_LINE.fullmatch(entry) or _BARE_HEADING.fullmatch(entry):
            number = f"{m['kind']} {m['num']}"
        elif m := _ROMAN_HEADING.fullmatch(entry):
            number = f"Article {m['num']}"
        else:
            number = entry
        self._open = OpenSection(number, "", [h for _, h in self.path], unnumbered=True)
        self.account.add("headings", -nonspace(number))  # counted in the section now
        self._text(lines)

    def finish(self) -> list[Section]:
        """The sections, in order; the account gets the characters in them and the section lines' syntax (counted
        over each field joined, as :func:`.base.in_sections` defines them, without a call per section)."""
        self._close()
        if not self.sections:
            raise FormatError("no section line (`Sec. <number>. - <heading>`) found")
        fields = [_joined(map(attrgetter(name), self.sections)) for name in ("number", "heading", "text")]
        notes = [_joined(chain.from_iterable(map(attrgetter(name), self.sections)))
                 for name in ("history", "cross_references")]
        self.account.in_sections = sum(map(nonspace, fields + notes))
        lines = _joined(self._section_lines)
        self.account.add("section_syntax", nonspace(lines) - lines.count("\t") - nonspace(_joined(self._numbers))
                         - nonspace(_joined(self._headings)) - nonspace(_joined(self._spills))
                         + 2 * sum(map(len, map(attrgetter("history"), self.sections))))  # a note's ( and )
        return self.sections

    def _start(self, m: re.Match[str], line: str) -> None:
        self._close()
        rest = m["rest"] or ""
        if m["open"] and rest.rstrip().endswith("]"):
            rest = rest.rstrip()[:-1]
        heading, spill = split_heading(rest)
        number = section_lines.number(m)  # normalised: no space but the ", " between numbers
        self._open = OpenSection(number, clean_heading(heading), [h for _, h in self.path],
                           reserved_range=(m["prefix"] or "").startswith("Secs") or "—" in number)
        spill = normalize(spill)
        if spill:
            self._open.lines.append(spill)
            self._spills.append(spill)
        self._section_lines.append(line)
        self._numbers.append(number)
        self._headings.append(self._open.heading)
        self._untitled = False

    def _close(self) -> None:
        if self._open is not None:
            self.sections.append(close_section(self._open, self.account))
            self._open = None
            self._outside = LOST  # text after a section and before the next structure line belongs nowhere


def _joined(parts: Iterable[str]) -> str:
    return "\n".join(parts)


def sections_from_text(text: str, folder: Folder | None = None, path: Path | None = None) -> list[Section]:
    """All sections of a Municode full-text export, in order; FormatError when there is no section line. With a
    ``folder``, the text's account (:class:`.base.TextAccount`) is kept there for ``path``."""
    assembler = Assembler()
    assembler.feed_text(text)
    sections = assembler.finish()
    if folder is not None and path is not None:
        folder.accounts[path] = assembler.account
    return sections


def sniff(data: bytes, path: Path) -> bool:
    """Text (not markup, not binary) with a section line anywhere in it (front matter can run long). Works on the
    bytes: only a candidate line is decoded."""
    if b"\x00" in data[:4096] or data.startswith(b"%PDF-") or _MARKUP_START.match(data):
        return False
    for m in _SNIFF.finditer(data):
        line = _REST_OF_LINE.match(data, m.end()).group().decode("utf-8", errors="replace").strip()
        if section_lines.SECTION_LINE.match(line):
            return True
    return False


@FORMATS.register("municode-text", sniff=sniff, extensions=(".txt",))
def parse(path: Path, folder: Folder) -> Iterator[Section]:
    """Sections of a Municode full-text export (see the module doc)."""
    yield from sections_from_text(decode_text(read_input(path), path), folder, path)
