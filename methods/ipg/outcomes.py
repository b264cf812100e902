"""Outcome scorers: a completed answer and the reference answer -> a number (1.0 = correct)."""

from __future__ import annotations

import re
from collections.abc import Callable

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
MARKED = re.compile(r"(?:answer is|answer:|####)\s*\$?\s*(-?\d[\d,]*(?:\.\d+)?)", re.IGNORECASE)


def normalize(number: str) -> str:
    """'1,200.0' -> '1200'."""
    number = number.replace(",", "").rstrip(".")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return "0" if number in ("-0", "") else number


def final_number(text: str) -> str | None:
    """The number after the last 'answer is' / 'answer:' / '####', else the last number in the text."""
    marked = MARKED.findall(text)
    if marked:
        return normalize(marked[-1])
    numbers = NUMBER.findall(text)
    return normalize(numbers[-1]) if numbers else None


def number_match(output: str, answer: str) -> float:
    """Exact match of the final number."""
    return float(final_number(output) == normalize(str(answer)))


def contains(output: str, answer: str) -> float:
    """The reference answer appears in the output (case-insensitive)."""
    return float(str(answer).strip().lower() in output.lower())


SCORERS: dict[str, Callable[[str, str], float]] = {"number": number_match, "contains": contains}
