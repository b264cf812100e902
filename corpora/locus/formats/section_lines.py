"""The section-line grammar of Municode-style codes, and which of its styles a file uses.

A section line is ``[prefix] number [.] separator catchline``:

- prefix: ``Sec.``, ``Secs.``, ``Sec``, ``Section``, ``Sections``, ``SECTION``, ``§``, ``§§``, optionally inside
  ``[`` ... ``]`` (Baldwin County's ``[Sec. 4.3. - Reserved.]``); none for three-factor numbers (``2.12.010``);
- number: dash, decimal and three-factor numbers with letter suffixes (``1-5.11``, ``2-11A``, ``101``, ``1.10``,
  ``5.08.040``), a range (``2-8—2-32``, ``5.08.040—5.08.110``) or a list (``10-136, 10-137``);
- the period after the number is optional (``Section 2.11 - Quorum``);
- separator: `` - `` (or an en or em dash), a tab, or ``. `` (the period then a space: ``Sec. 5-1. Heading``).

A dash after a number at a line's start is layout, never prose, so those lines are always section lines.
``Section 1.<tab>The Code entitled ...`` or ``Sec. 5-1. The council shall ...`` may be prose (an adopting
ordinance's numbered paragraphs in the front matter), so the tab and ``. `` styles count only in a file that uses
them more than the dash style: :func:`file_styles` decides per file, from all its candidate lines. A candidate
with no text of its own whose number comes again later in the file is a table-of-contents entry, never a section.

:data:`NEAR_MISS` is a line that starts like a section line of a style this grammar does not know (``Sec 5-1:
Heading``): the assembler never lets one into a section's text, and counts what follows it as unaccounted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_N = r"[0-9A-Za-z][0-9A-Za-z.\-—–]*?"  # lazy: the number ends where the separator first fits
_DECIMAL = r"\d+[A-Z]?\.\d+[A-Z]?(?:\.\d+[A-Z]?)?(?:\.\d+)?"  # 1.01, 2.12.010, 5.08.040A
SECTION_LINE = re.compile(
    rf"(?P<open>\[)?(?:(?P<prefix>Secs?\.?|Sections?|SECTIONS?|§§?) ?(?P<number>{_N}(?:, {_N})*)"
    rf"|(?P<decimal>{_DECIMAL}(?:[—–]{_DECIMAL})?))"
    r"(?:(?P<dash>\.? [-—–](?: |$))|(?P<tab>\.?\t+ ?)|(?P<period>\. (?=\S)))"
    r"(?P<rest>.*)")
NEAR_MISS = re.compile(  # starts like a section line (prefix, number, a separator, a capital) but is none
    r"\[?(?:Secs?\.?|Sections?|SECTIONS?|§§?)\s*\d[0-9A-Za-z.\-—–]*\s*(?:[-—–:|=~]{1,3}|\.|\t|\s{2,})\s*[\[(\"]?[A-Z]")


def style(m: re.Match[str]) -> str:
    """The separator style of a :data:`SECTION_LINE` match."""
    return "dash" if m["dash"] is not None else "tab" if m["tab"] is not None else "period"


def number(m: re.Match[str]) -> str:
    return m["number"] or m["decimal"]


def match(line: str) -> re.Match[str] | None:
    """The grammar's match of a whole line (a prefix-less number only with the dash or tab style and a catchline
    that starts with a capital: ``2.5 - 3.0 acres`` is text)."""
    m = SECTION_LINE.fullmatch(line)
    if m is None or (m["decimal"] and (m["period"] is not None or not m["rest"][:1].isupper())):
        return None
    return m


@dataclass(frozen=True)
class FileStyles:
    """What one file's candidate lines say: the styles that make sections, and its table-of-contents lines."""

    accepted: frozenset[str]
    toc: frozenset[int]  # indices (into the lines) of table-of-contents entries
    matches: dict[int, re.Match[str]] | None = None  # the candidate lines' matches, when already made

    def starts(self, lines: list[str], candidates: list[int]) -> dict[int, re.Match[str]]:
        """The candidate lines that start a section in this file, with their matches."""
        out = {}
        for i in candidates:
            m = self.matches.get(i) if self.matches is not None else match(lines[i])
            if m is not None and i not in self.toc and style(m) in self.accepted:
                out[i] = m
        return out


DASH_ONLY = FileStyles(frozenset({"dash"}), frozenset())


def file_styles(lines: list[str], candidates: list[int], structural: list[int]) -> FileStyles:
    """Decide a file's styles from its candidate lines (indices into ``lines``; ``structural`` are all the lines
    that may end a section's text: candidates and headings, in order).

    Table-of-contents entries are set aside first (no text before the next structural line, and the same number
    again later). Then dash lines count always; the tab and ``. `` styles count when they have more lines than the
    dash style."""
    found = [(i, m) for i in candidates if (m := match(lines[i])) is not None]
    matches = dict(found)
    numbers = [number(m) for _, m in found]
    later = Counter(numbers)
    toc: set[int] = set()
    if len(later) < len(numbers):  # some number comes twice: look for entries without text
        following = dict(zip(structural, [*structural[1:], len(lines)], strict=True))
        for (i, _), n in zip(found, numbers, strict=True):
            later[n] -= 1
            if later[n] > 0 and not any(lines[i + 1:following.get(i, i + 1)]):
                toc.add(i)
    counts = Counter(style(m) for i, m in found if i not in toc)
    accepted = {"dash"} | {s for s in ("tab", "period") if counts[s] > counts["dash"]}
    return FileStyles(frozenset(accepted), frozenset(toc), matches)
