"""Normalised lines of a code's text: invisible characters removed, any run of spaces one space, stripped.

Every text format passes its whole text through :func:`normalized_lines` once, which makes it the parsers'
hottest loop: it is compiled from ``_lines.c`` when the package is installed (``pip install -e .``, with a C
compiler), and :func:`normalized_lines_py` is the same in Python, used when no compiled module was built.
A test checks that the two agree on the real codes and on generated text; :data:`COMPILED` says which is in
use.

Definitions: a line is what ``str.splitlines`` gives, a space what ``str.split`` splits on, an invisible
character one of :data:`INVISIBLE_CHARS` (control and zero-width characters, which are removed before the
spaces are squeezed, so ``"a\\u200bb"`` is ``"ab"``).
"""

from __future__ import annotations

import re

INVISIBLE_CHARS = "".join(map(chr, [*range(0x09), *range(0x0e, 0x20), 0x7f, 0x200b, 0xfeff, 0xfffe]))
INVISIBLE = re.compile(f"[{re.escape(INVISIBLE_CHARS)}]")


def normalize(line: str) -> str:
    """One line with invisible characters removed and any run of spaces (tabs, em spaces) as one space."""
    if line.isprintable():  # the common case: no control, format or non-space whitespace character
        return " ".join(line.split())
    joined = " ".join(line.split())  # str.split() splits on what \s matches: tabs, em spaces, ...
    if joined.isprintable() and "\x1f" not in line:  # only odd spaces (\x1f is both a space and invisible)
        return joined
    return " ".join(INVISIBLE.sub("", line).split())


def normalized_lines_py(text: str) -> list[str]:
    """``[normalize(line) for line in text.splitlines()]``, with the checks each line needs only."""
    if any(c in text for c in INVISIBLE_CHARS):
        squeeze = normalize
    else:
        def squeeze(line: str) -> str:
            return " ".join(line.split())
    # a printable line holds no space but " ": stripped and without a double space, it is normalised
    return [line if line.isprintable() and "  " not in line else squeeze(line) for line in map(str.strip,
                                                                                                text.splitlines())]


try:
    from ._lines import normalized_lines
except ImportError:  # installed without a C compiler: the same, slower
    normalized_lines = normalized_lines_py
COMPILED = normalized_lines is not normalized_lines_py
