"""A section's notes and status, once its lines are in: history notes (``(Ord. of 6-17-2008, § 1)``) and
cross-references (``State Law reference— ...``) taken out of its text, and its status (active, repealed,
reserved) read from its heading and text. Used by :class:`.municode.Assembler` when a section closes.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from .base import Section, TextAccount, nonspace

_LETTER = re.compile("[A-Za-z]")
_DIGIT = re.compile(r"\d")
_PARENS = re.compile("[()]")
_HISTORY_START = re.compile(  # what a history note cites first: an ordinance, a code, a session law
    r"(?:Ords?\.|Ordinance|Code\b|Res\.|Resolution|Amd\.|Amend|Min\.|Minutes|Mo\.|Acts?\b"
    r"|Ga\. ?L|\d{4} Ga\. L)")
CROSS_REF = r"(?:Cross|State (?:[Ll]aw|[Cc]onstitution)|Charter) references?\s*—"
_CROSS_REF_START = re.compile(CROSS_REF)
_CROSS_REF_INLINE = re.compile(r"(?<=\s)" + CROSS_REF)
_NOTE_STARTS = ("(", "Cross", "State", "Charter")  # what a history note or a cross-reference (CROSS_REF) starts with


def closing_group(line: str) -> int | None:
    """Index of the ``(`` that matches the ``)`` ending ``line`` (None when unbalanced or not a group)."""
    if not line.endswith(")"):
        return None
    last_open = line.rfind("(")
    if last_open >= 0 and line.find(")", last_open, -1) < 0:  # the common case: no parenthesis inside the group
        return last_open
    depth = 0
    for m in reversed(list(_PARENS.finditer(line))):
        depth += 1 if m.group() == ")" else -1
        if depth == 0:
            return m.start()
    return None


def _citation(group: str) -> str | None:
    """The citation inside ``(Ord. of 6-17-2008, § 1)``-like text, or None when it is not one."""
    inner = group[1:-1].strip()
    return inner if _HISTORY_START.match(inner) and _DIGIT.search(inner) else None


@dataclass
class OpenSection:
    """A section being assembled: its line, the path above it, its lines so far."""

    number: str
    heading: str
    path: list[str]
    lines: list[str] = field(default_factory=list)
    reserved_range: bool = False
    unnumbered: bool = False  # a heading's own text, numbered by the heading


def _split_run_in_notes(line: str) -> list[str]:
    """A section's last line with the history note and cross-references that ran into it split off."""
    refs: list[str] = []
    if "reference" in line and (m := _CROSS_REF_INLINE.search(line)):  # a substring test first: lines are long
        line, notes = line[: m.start()].rstrip(), line[m.start():]
        starts = [r.start() for r in _CROSS_REF_START.finditer(notes)] + [len(notes)]
        refs = [notes[a:b].strip() for a, b in itertools.pairwise(starts)]
    start = closing_group(line)
    if start and _citation(line[start:]):
        return [line[:start].rstrip(), line[start:], *refs]
    return [line, *refs]


def close_section(s: OpenSection, account: TextAccount) -> Section:
    """History notes and cross-references taken out of the text; status from heading and text (the parentheses
    around a history note and layout debris in a reserved section go to ``account`` as structure)."""
    lines = s.lines  # normalised
    if lines:
        lines[-1:] = _split_run_in_notes(lines[-1])
    text: list[str] = []
    history: list[str] = []
    refs: list[str] = []
    done = 0  # lines before this one are placed; only possible notes are looked at one by one
    # lines that may be notes: (...) or a cross-reference (one found no note stays text, in its place)
    for k in [k for k, line in enumerate(lines) if line.startswith(_NOTE_STARTS)]:
        if k < done or (lines[k][0] == "(" and lines[k][-1] != ")"):  # in a wrapped cross-reference, or text
            continue
        text.extend(lines[done:k])
        line, done = lines[k], k + 1
        if line.startswith("(") and closing_group(line) == 0 and (citation := _citation(line)):
            history.append(citation)  # its parentheses are counted when the text is finished
        elif _CROSS_REF_START.match(line):
            refs.append(line)
            while not refs[-1].endswith(".") and done < len(lines):  # a wrapped cross-reference goes on until
                after = lines[done]                                  # a line ends with a period
                if after.startswith("Editor's note") or _CROSS_REF_START.match(after) or (
                        after.startswith("(") and closing_group(after) == 0 and _citation(after)):
                    break
                refs[-1] += " " + after
                done += 1
        else:
            text.append(line)
    text.extend(lines[done:])
    body = "\n".join(text)
    status = _status(s.heading, body, s.reserved_range)
    if status == "reserved" and not _LETTER.search(body):  # layout debris (`.....`, `3`), not text
        account.add("furniture", nonspace(body))
        body = ""
    return Section(number=s.number, heading=s.heading, text=body, path=s.path, history=history,
                   cross_references=refs, status=status)


def _status(heading: str, text: str, reserved_range: bool) -> str:
    words = heading.strip("[]() .").lower()
    first = text.lstrip("[(")[:8].lower()  # enough for the words below; a whole section would be lowered
    if words.startswith(("repealed", "deleted", "rescinded")) or first.startswith("repealed"):
        return "repealed"
    if words.startswith("reserved") or first.startswith("reserved") or (reserved_range and not text):
        return "reserved"
    return "active"
