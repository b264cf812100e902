"""Size and nesting limits checked before a submitted JSON file is parsed.

Python's ``json`` recurses once per nesting level: a file nested a few thousand levels deep raises
``RecursionError`` (a traceback, not a reason). :func:`check_json` measures the depth without parsing (strings
removed by one regular expression, brackets counted with numpy) and names the limit a file breaks.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from .modelinfo import SubmissionRejected, too_big

MAX_DEPTH = 64  # lm-eval files nest about 6 levels deep
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN, _CLOSE = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


def json_depth(data: bytes) -> int:
    """The deepest bracket nesting of a JSON text (0 for a scalar), strings ignored."""
    if data.count(b"[") + data.count(b"{") == 0:
        return 0
    codes = np.frombuffer(_STRING.sub(b"", data), np.uint8)
    steps = np.isin(codes, _OPEN).astype(np.int32) - np.isin(codes, _CLOSE).astype(np.int32)
    return int(np.cumsum(steps).max(initial=0))


def check_json(data: bytes, where: str, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`SubmissionRejected` naming ``where`` when ``data`` is over ``max_bytes`` or nested deeper
    than ``max_depth``."""
    if max_bytes is not None and len(data) > max_bytes:
        raise SubmissionRejected([(where, too_big(len(data), max_bytes))])
    if data.count(b"[") + data.count(b"{") > max_depth and json_depth(data) > max_depth:
        raise SubmissionRejected([(where, f"JSON nested deeper than {max_depth} levels")])


def check_jsonl(data: bytes, where: str, max_depth: int = MAX_DEPTH) -> None:
    """:func:`check_json` for each line of a JSON Lines file (the reason names the line)."""
    for line_no, line in enumerate(data.splitlines(), 1):
        check_json(line, f"{where}:{line_no}", max_depth=max_depth)


def loads(data: bytes, where: str, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` after :func:`check_json`; a file that is not JSON is a :class:`SubmissionRejected` too."""
    check_json(data, where, max_bytes, max_depth)
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SubmissionRejected([(where, f"not a JSON file: {exc}")]) from None
