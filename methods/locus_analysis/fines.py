"""Fines and jail terms a section states, by rules (no training, no model).

- ``max_fine_usd``: the largest dollar amount in a sentence that speaks of a fine, penalty, punishment or
  forfeiture ("$1,000.00", "$5 million", "one thousand dollars", "five hundred dollars ($500.00)"); a range
  "not less than $50 nor more than $500" gives 500. Amounts in sentences about fees, bonds or costs only are
  not fines. None when the section states none.
- ``fine_per_day``: each day (or every day) a violation continues counts as a separate offense/violation,
  or the fine is stated per day.
- ``jail_mentioned``: jail, prison, imprisonment or incarceration is mentioned ("confined" is not a jail
  word: codes confine animals).
- ``max_jail_days``: the longest term (number + day/month/year, a month = 30 days, a year = 365) found within
  a short window of a jail word in the same sentence; "ninety (90) days" counts once, as 90. None when none
  is stated.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

_UNIT_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
               "sixteen seventeen eighteen nineteen")
UNITS = {w: i for i, w in enumerate(_UNIT_WORDS.split())}  # noqa: SIM905
TENS = {w: 10 * i for i, w in enumerate(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                         "ninety"), start=2)}
SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}
_NUMBER_WORD = "|".join(sorted([*UNITS, *TENS, *SCALES], key=len, reverse=True))
_WORDS = rf"(?:{_NUMBER_WORD})(?:(?:\s+|-|\s+and\s+)(?:{_NUMBER_WORD}))*"

DOLLARS = re.compile(r"\$\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?(?!\d)(?:\s+(million|thousand)\b)?", re.I)
WORD_DOLLARS = re.compile(rf"\b({_WORDS})\s+dollars\b", re.I)
NUMBER_DOLLARS = re.compile(r"\b(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?\s+dollars\b", re.I)
FINE_WORDS = re.compile(r"\b(fine[sd]?|penalt(?:y|ies)|punish\w*|forfeit\w*)\b", re.I)
PER_DAY = re.compile(
    r"\b(?:each|every)\s+(?:and\s+every\s+)?(?:calendar\s+)?day\b[^.]{0,160}?\b(?:separate|distinct|new|"
    r"additional)\s+(?:and\s+distinct\s+)?(?:offen[cs]e|violation)"
    r"|\b(?:separate|distinct)\s+(?:offen[cs]e|violation)[^.]{0,80}?\b(?:each|every)\s+day\b"
    r"|\$\s*[\d,.]+\s*(?:per|a|for\s+each)\s+day\b", re.I)
JAIL = re.compile(r"\b(jail|imprison\w*|incarcerat\w*|prison)\b", re.I)  # "confined" is said of animals too
TERM = re.compile(rf"\b(\d+|{_WORDS})(?:\s*\((\d+)\))?\s+(days?|months?|years?)\b", re.I)
UNIT_DAYS = {"day": 1, "month": 30, "year": 365}
JAIL_WINDOW = 100  # characters either side of a jail word in which a term counts
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


@dataclass
class Fines:
    max_fine_usd: float | None
    fine_per_day: bool
    jail_mentioned: bool
    max_jail_days: int | None

    def as_dict(self) -> dict:
        return asdict(self)


def words_to_number(text: str) -> int:
    """``"two hundred fifty"`` -> 250, ``"one thousand five hundred"`` -> 1500."""
    total = current = 0
    for word in re.split(r"[\s-]+", text.lower()):
        if word in ("", "and"):
            continue
        if word in UNITS:
            current += UNITS[word]
        elif word in TENS:
            current += TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in SCALES:
            total += max(current, 1) * SCALES[word]
            current = 0
        else:
            raise ValueError(f"not a number word: {word!r} in {text!r}")
    return total + current


def _number(text: str) -> int:
    return int(text.replace(",", "")) if text[0].isdecimal() else words_to_number(text)


def sentences(text: str) -> list[str]:
    return [s for s in SENTENCE_BREAK.split(" ".join(text.split())) if s]


def amounts(sentence: str) -> list[float]:
    """Every dollar amount in a sentence."""
    found = []
    for m in DOLLARS.finditer(sentence):
        value = int(m.group(1).replace(",", "")) + (int(m.group(2).ljust(2, "0")) / 100 if m.group(2) else 0)
        found.append(value * SCALES.get((m.group(3) or "").lower(), 1))
    found += [words_to_number(m.group(1)) for m in WORD_DOLLARS.finditer(sentence)]
    found += [int(m.group(1).replace(",", "")) for m in NUMBER_DOLLARS.finditer(sentence)]
    return [float(v) for v in found]


def jail_terms(text: str) -> list[int]:
    """Terms in days found near a jail word in the same sentence."""
    terms = []
    for sentence in sentences(text):
        windows = [(max(0, m.start() - JAIL_WINDOW), m.end() + JAIL_WINDOW) for m in JAIL.finditer(sentence)]
        for m in TERM.finditer(sentence) if windows else ():
            if any(lo <= m.start() and m.end() <= hi for lo, hi in windows):
                number = int(m.group(2)) if m.group(2) else _number(m.group(1))
                terms.append(number * UNIT_DAYS[m.group(3).lower().rstrip("s")])
    return terms


def extract(text: str) -> Fines:
    """Fines, per-day flag and jail terms of one section's text (see the module docstring)."""
    if not isinstance(text, str):
        raise ValueError(f"section text must be a string, got {type(text).__name__}")
    fines = [a for s in sentences(text) if FINE_WORDS.search(s) for a in amounts(s)]
    jail = jail_terms(text)
    return Fines(max_fine_usd=max(fines) if fines else None,
                 fine_per_day=bool(PER_DAY.search(" ".join(text.split()))),
                 jail_mentioned=bool(JAIL.search(text)),
                 max_jail_days=max(jail) if jail else None)
