"""One jurisdiction's parsed files merged into one code: parts concatenated, twins decided per section.

A jurisdiction folder can hold one code in several files (``<name>1-code-full.txt``, ``<name>2-code-full.txt``)
and in several formats (a text export beside its TEI markup, a Word copy). Files of one format are the parts of
one sequence, concatenated in natural file order; sequences of different formats are twins section by section:

- a section is keyed by its number and its occurrence within its sequence (the second ``1-1`` of a format is
  ``(1-1, 2)``), and two sections with the same key are twins when their headings agree;
- the kept code is the union of every sequence's sections, each section taken from the most structured format
  that has it (:data:`~.records.FORMAT_PREFERENCE`), in the order of the longest sequence, a section only
  another sequence has following its predecessor there;
- a recovered (malformed) file that lacks sections a twin has ranks below that twin, so a repaired parse never
  costs a section the text export carries;
- every file's report says how many of its sections were kept and how many were dropped as twins of which file.

So an incomplete TEI twin no longer replaces a complete text export, and a one-section file in another format
is no longer the "twin" of a whole code.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from .formats import Section
from .records import FORMAT_PREFERENCE, FileReport

Key = tuple[str, int]  # (section number, occurrence within its sequence)
_WORDS = re.compile(r"[^0-9a-z]+")


@dataclass
class Parsed:
    """One parsed file: its report, format, sections, and whether its parse was a recovery."""

    report: FileReport
    format: str
    sections: list[Section]
    recovered: bool = False


@dataclass
class _Sequence:
    format: str
    entries: list[tuple[Key, Section, Parsed]]
    recovered: bool

    def keys(self) -> set[Key]:
        return {k for k, _, _ in self.entries}


def _rank(format_name: str) -> int:
    return FORMAT_PREFERENCE.index(format_name) if format_name in FORMAT_PREFERENCE else len(FORMAT_PREFERENCE)


def _agree(a: str, b: str) -> bool:
    """Two headings of one section, from two formats: equal up to case, spacing and punctuation, or one a prefix
    of the other (a heading cut by the layout), or either empty."""
    a, b = _WORDS.sub("", a.lower()), _WORDS.sub("", b.lower())
    return not a or not b or a.startswith(b) or b.startswith(a)


def _sequences(files: list[Parsed]) -> list[_Sequence]:
    by_format: dict[str, list[Parsed]] = defaultdict(list)
    for f in files:
        by_format[f.format].append(f)
    out = []
    for name, parts in by_format.items():
        seen: dict[str, int] = defaultdict(int)
        entries = []
        for part in parts:
            for s in part.sections:
                seen[s.number] += 1
                entries.append(((s.number, seen[s.number]), s, part))
        out.append(_Sequence(name, entries, any(p.recovered for p in parts)))
    return out


def merge(files: list[Parsed]) -> list[tuple[Section, Parsed]]:
    """The code's sections, each with the file it comes from; fills ``kept``/``dropped``/``status``/``reason`` of
    every file's report (see the module doc)."""
    dropped: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # file -> twin file -> sections
    if len({f.format for f in files}) <= 1:  # one format: its parts concatenated, no twins to decide
        merged = [(section, f) for f in files for section in f.sections]
    else:
        merged = _union(files, dropped)
    counts: dict[str, int] = defaultdict(int)
    for _, f in merged:
        counts[f.report.path] += 1
    for f in files:
        f.report.kept = counts[f.report.path]
        f.report.dropped = sum(dropped[f.report.path].values())
        if f.report.dropped:
            twins = ", ".join(f"{n} as twins of {other}" for other, n in sorted(dropped[f.report.path].items()))
            f.report.reason = f"{f.report.dropped} of {len(f.sections)} section(s) dropped: {twins}"
        if f.sections and not f.report.kept:
            f.report.status = "duplicate"
    return merged


def _union(files: list[Parsed], dropped: dict[str, dict[str, int]]) -> list[tuple[Section, Parsed]]:
    """The union of several formats' sequences, each section from the most structured format that has it; counts
    each file's sections dropped as twins in ``dropped``."""
    sequences = _sequences(files)
    everything = set().union(*(s.keys() for s in sequences)) if sequences else set()
    # A recovered sequence that misses sections another one has ranks last: the other versions win.
    ranked = sorted(sequences, key=lambda s: (s.recovered and bool(everything - s.keys()), _rank(s.format)))
    spine = max(sequences, key=lambda s: (len(s.entries), -ranked.index(s)), default=None)
    order: list[Key] = [k for k, _, _ in spine.entries] if spine else []
    chosen: dict[Key, tuple[Section, Parsed]] = {}
    extra = 0  # sections whose heading disagrees with the same number elsewhere: kept, under a fresh key
    for seq in ranked:
        placed = set(order)
        inserts: dict[Key | None, list[Key]] = defaultdict(list)
        anchor: Key | None = None  # the last key of this sequence that the order already holds
        for key, section, part in seq.entries:
            if key in chosen and _agree(chosen[key][0].heading, section.heading):
                dropped[part.report.path][chosen[key][1].report.path] += 1
                anchor = key
                continue
            if key in chosen:
                extra += 1
                key = (key[0], -extra)
            chosen[key] = (section, part)
            if key in placed:
                anchor = key
            else:
                inserts[anchor].append(key)  # runs of new keys follow their anchor in sequence order
        if inserts:
            order = _insert(order, inserts)
    return [chosen[k] for k in order]


def _insert(order: list[Key], inserts: dict[Key | None, list[Key]]) -> list[Key]:
    """``order`` with each list of new keys placed right after its anchor (``None``: at the start)."""
    out = list(inserts.get(None, []))
    for key in order:
        out.append(key)
        out.extend(inserts.get(key, []))
    return out
