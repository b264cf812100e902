"""Where every character of a code's text went: into a section, into recognised structure, or nowhere.

A parser that assembles sections from text (:class:`.municode.Assembler`: the Municode text, Word, PDF and TEI
formats) keeps a :class:`TextAccount` per file: the non-whitespace characters it read (``total``) and those it
recognised as structure, by kind. The characters in sections are counted from the sections it returns
(:func:`in_sections`: number, heading, text, history, cross-references), so ``unaccounted = total - in sections -
structure`` is whatever the parser lost without recognising it: the build reports it per file and names the
files that lose more than ``records.UNACCOUNTED_LIMIT``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

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
