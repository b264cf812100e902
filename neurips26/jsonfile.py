"""The one reader of JSON that comes from outside (results and samples files, uploads): size and nesting are
checked before parsing, and every failure is a :class:`JsonFileError` that names the file and why.

Python's ``json`` recurses once per nesting level, so a file nested a few thousand levels deep raises
``RecursionError`` (a traceback, not a reason). :func:`depth` measures the nesting without parsing (strings
removed by one regular expression, brackets counted with numpy); :func:`loads` refuses a text over its byte or
depth limit before ``json.loads`` sees it, and turns every other failure (not UTF-8, not JSON, a number with
more digits than Python converts) into a :class:`JsonFileError`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from .errors import UserError

MAX_DEPTH = 64  # lm-eval files nest about 6 levels deep
MAX_BYTES = 256 * 2**20  # any one JSON file read from outside
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN, _CLOSE = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


class JsonFileError(UserError):
    """A JSON text that is too big, nested too deeply or not JSON; ``where`` names it, ``why`` says what."""

    def __init__(self, where: str, why: str) -> None:
        self.where, self.why = where, why
        super().__init__(f"{where}: {why}")


def too_big(size: int, limit: int) -> str:
    """``"file is 12,000 bytes, over the limit of 10,000"``."""
    return f"file is {size:,} bytes, over the limit of {limit:,}"


def depth(data: bytes) -> int:
    """The deepest bracket nesting of a JSON text (0 for a scalar), strings ignored."""
    if data.count(b"[") + data.count(b"{") == 0:
        return 0
    codes = np.frombuffer(_STRING.sub(b"", data), np.uint8)
    steps = np.isin(codes, _OPEN).astype(np.int32) - np.isin(codes, _CLOSE).astype(np.int32)
    return int(np.cumsum(steps).max(initial=0))


def check(data: bytes, where: str, max_bytes: int | None = MAX_BYTES, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`JsonFileError` naming ``where`` when ``data`` is over ``max_bytes`` or nested deeper than
    ``max_depth``."""
    if max_bytes is not None and len(data) > max_bytes:
        raise JsonFileError(where, too_big(len(data), max_bytes))
    if data.count(b"[") + data.count(b"{") > max_depth and depth(data) > max_depth:
        raise JsonFileError(where, f"JSON nested deeper than {max_depth} levels")


def loads(data: bytes | str, where: str, max_bytes: int | None = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` after :func:`check`; anything that is not JSON is a :class:`JsonFileError` naming ``where``.

    Bytes may be UTF-8 (a BOM allowed), UTF-16 or UTF-32 (as ``json.loads`` detects them)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    check(raw, where, max_bytes, max_depth)
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise JsonFileError(where, f"not a JSON file: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise JsonFileError(where, f"not a JSON file (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more digits than Python converts
        raise JsonFileError(where, f"not a JSON file: {' '.join(str(exc).split())[:200]}") from None


def read(path: Path | str, where: str | None = None, max_bytes: int | None = MAX_BYTES,
         max_depth: int = MAX_DEPTH) -> Any:
    """The JSON file at ``path`` (its size checked before it is read), as :func:`loads`."""
    path = Path(path)
    where = where or str(path)
    try:
        size = path.stat().st_size
        if max_bytes is not None and size > max_bytes:
            raise JsonFileError(where, too_big(size, max_bytes))
        data = path.read_bytes()
    except OSError as exc:
        raise JsonFileError(where, f"cannot be read ({exc.strerror or exc})") from None
    return loads(data, where, max_bytes, max_depth)


def lines(data: bytes, where: str, max_depth: int = MAX_DEPTH) -> list[tuple[int, Any]]:
    """The (line number, value) of every non-blank line of a JSON Lines text, each read as :func:`loads` (the
    error names ``where:line``)."""
    return [(number, loads(line, f"{where}:{number}", None, max_depth))
            for number, line in enumerate(data.splitlines(), 1) if line.strip()]
