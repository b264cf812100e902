"""The one decoding rule for text from outside (command-line arguments, stdin lines, SQL and search text sent to
the Space): it is UTF-8, and anything else is a :class:`~neurips26.errors.UserError` that says where.

Python decodes command-line arguments with ``surrogateescape``: a byte that is not UTF-8 arrives as a lone
surrogate U+DC80..U+DCFF, which DuckDB, JSON and the terminal cannot take. :func:`check_text` names such a byte
(and any other lone surrogate, as a browser can send) with its position; :func:`decode_line` decodes one stdin
line strictly, so a bad line is answered and the next one still read.
"""

from __future__ import annotations

import re

from .errors import UserError

_SURROGATE = re.compile("[\ud800-\udfff]")


class DecodingError(UserError):
    """Text that is not UTF-8 (the message names where and the byte or character)."""


def check_text(text: str, where: str) -> str:
    """``text`` when every character of it can be written as UTF-8; :class:`DecodingError` otherwise."""
    bad = _SURROGATE.search(text)
    if bad is None:
        return text
    code = ord(bad.group())
    what = (f"byte 0x{code - 0xDC00:02x} is not UTF-8" if 0xDC80 <= code <= 0xDCFF
            else f"U+{code:04X} is a lone surrogate, not a character")
    raise DecodingError(f"{where}: {what} (at character {bad.start() + 1}); give UTF-8 text")


def decode_line(data: bytes, where: str) -> str:
    """One line of bytes as UTF-8 text (a leading BOM dropped); :class:`DecodingError` naming the byte."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise DecodingError(f"{where}: byte 0x{data[exc.start]:02x} at position {exc.start + 1} is not UTF-8; "
                            "give UTF-8 text") from None
