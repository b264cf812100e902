"""Answers out of a model's free text: an option letter (the Video-MME rules) and a time span.

:func:`extract_option` is the answer extraction of the Video-MME evaluation
(``extract_characters_regex`` in its scoring code), with the letters
generalised from A-D to the number of options:

1. strip surrounding whitespace;
2. delete the phrases "The best answer is", "The correct answer is",
   "The answer is", "The answer", "The best option is", "The correct option
   is", "Best answer:", "Best option:" (case-sensitive, wherever they occur,
   in that order);
3. no option letter left -> no answer (the rule also says so explicitly for
   texts of more than ten words);
4. otherwise the first capital option letter anywhere in the text.

Rule 4 is deliberately literal: "Based on the video, C" yields "B" (the B of
"Based"), as in Video-MME; scores stay comparable with published ones because
the quirks are kept. Prompts should ask for the letter alone.
"""

from __future__ import annotations

import re

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
PREFIXES = ("The best answer is", "The correct answer is", "The answer is", "The answer", "The best option is",
            "The correct option is", "Best answer:", "Best option:")
_TIME = re.compile(r"(?<![\d.])(\d+(?::\d{1,2}){0,2}(?:\.\d+)?)")


def extract_option(text: str, num_options: int = 4) -> str:
    """The option letter in ``text`` by the Video-MME rules, or "" when there is none."""
    if not 1 <= num_options <= len(LETTERS):
        raise ValueError(f"num_options must be 1..{len(LETTERS)}, not {num_options}")
    s = (text or "").strip()
    for prefix in PREFIXES:
        s = s.replace(prefix, "")
    letters = f"[{LETTERS[:num_options]}]"
    if len(s.split()) > 10 and not re.search(letters, s):
        return ""
    match = re.search(letters, s)
    return match[0] if match else ""


def _seconds(token: str) -> float:
    total = 0.0
    for part in token.split(":"):
        total = total * 60 + float(part)
    return total


def extract_span(text: str) -> tuple[float, float] | None:
    """The first two times in ``text`` (seconds, ``MM:SS`` or ``HH:MM:SS``) as (start, end), ordered; else None.

    "from 3.5 s to 7 s", "[3.5, 7.0]", "00:03 - 00:07" and "between 2 and 5 seconds" all parse.
    """
    times = [_seconds(t) for t in _TIME.findall(text or "")[:2]]
    if len(times) < 2:
        return None
    return min(times), max(times)
