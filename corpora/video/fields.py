"""Annotation fields as releases write them: options, answers and time spans, normalised or rejected.

Each parser returns the normalised value or raises :class:`ItemError` with the
reason the builder records.

- options: a list of strings (``"A. text"``, ``"(A) text"`` or plain text) or
  a mapping ``{"A": text, ...}`` -> plain texts in letter order;
- a choice answer: a letter (``"B"``, ``"(B)"``, ``"B. text"``), the option
  text itself, or an integer (0-based index) -> the option index;
- a span: ``[start, end]``, ``{"start": s, "end": e}``, ``"3.2-5.8"``,
  ``"00:03.2 - 00:05.8"`` -> (start, end) seconds with 0 <= start < end.
"""

from __future__ import annotations

import re
from typing import Any

from neurips26.errors import UserError

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PREFIX = re.compile(r"^\s*\(?([A-Z])\s*[).:]\s*(.*)$", re.S)
_NUMBER = r"(\d+(?::\d+){0,2}(?:\.\d+)?)"
_SPAN = re.compile(_NUMBER + r"\s*(?:s|sec|seconds)?\s*(?:-|–|to|,)\s*" + _NUMBER)


class ItemError(UserError):
    """An annotation item is malformed (the message says how)."""


def options(value: Any) -> list[str]:
    if isinstance(value, dict):
        keys = sorted(value, key=str)
        if [str(k).strip().upper() for k in keys] != list(LETTERS[: len(keys)]):
            raise ItemError(f"options: keys {keys} are not the letters A, B, ...")
        texts = [value[k] for k in keys]
    elif isinstance(value, list):
        texts = value
    else:
        raise ItemError(f"options: expected a list or a letter mapping, got {type(value).__name__}")
    if not all(isinstance(t, str | int | float) and str(t).strip() for t in texts):
        raise ItemError("options: every option must be non-empty text")
    texts = [str(t).strip() for t in texts]
    matches = [_PREFIX.match(t) for t in texts]
    if all(matches) and [m.group(1) for m in matches] == list(LETTERS[: len(texts)]):
        texts = [m.group(2).strip() for m in matches]
    if len(texts) < 2:
        raise ItemError(f"options: need at least 2, got {len(texts)}")
    if len(set(texts)) != len(texts):
        raise ItemError("options: two options have the same text")
    return texts


def choice(answer: Any, opts: list[str]) -> int:
    """Index of the answer among ``opts``."""
    if isinstance(answer, bool) or answer is None:
        raise ItemError(f"answer {answer!r} is not an option")
    if isinstance(answer, int):
        if 0 <= answer < len(opts):
            return answer
        raise ItemError(f"answer index {answer} out of range for {len(opts)} options")
    text = str(answer).strip()
    if text in opts:
        return opts.index(text)
    match = re.fullmatch(r"\(?([A-Za-z])\)?(?:\s*[.:)]\s*(.*))?", text, re.S)
    if match:
        k = LETTERS.find(match.group(1).upper())
        if 0 <= k < len(opts) and (not match.group(2) or match.group(2).strip() == opts[k]):
            return k
        raise ItemError(f"answer {text!r} is not one of the {len(opts)} options ({LETTERS[:len(opts)]})")
    lowered = [o.lower() for o in opts]
    if text.lower() in lowered:
        return lowered.index(text.lower())
    raise ItemError(f"answer {text[:40]!r} is neither an option letter nor an option's text")


def seconds(value: Any) -> float:
    """Seconds from a number or from ``SS``, ``MM:SS`` or ``HH:MM:SS`` text (fractions allowed)."""
    if isinstance(value, bool):
        raise ItemError(f"time {value!r} is not a number")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().removesuffix("s").strip()
    try:
        parts = [float(p) for p in text.split(":")]
    except ValueError:
        raise ItemError(f"time {value!r} is not a number of seconds or MM:SS") from None
    if len(parts) > 3:
        raise ItemError(f"time {value!r} has too many ':' parts")
    total = 0.0
    for part in parts:
        total = total * 60 + part
    return total


def span(value: Any) -> tuple[float, float]:
    if isinstance(value, dict):
        pair = [value.get("start", value.get("start_time")), value.get("end", value.get("end_time"))]
    elif isinstance(value, list | tuple):
        pair = list(value)
    elif isinstance(value, str):
        match = _SPAN.search(value)
        if not match:
            raise ItemError(f"span {value[:40]!r}: no 'start - end' in it")
        pair = [match.group(1), match.group(2)]
    else:
        raise ItemError(f"span: expected [start, end], got {type(value).__name__}")
    if len(pair) != 2 or None in pair:
        raise ItemError(f"span {value!r}: expected a start and an end")
    start, end = seconds(pair[0]), seconds(pair[1])
    if not 0 <= start < end:
        raise ItemError(f"span: need 0 <= start < end, got {start:g}-{end:g}")
    return start, end
