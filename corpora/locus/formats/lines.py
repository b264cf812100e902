"""A code's text as normalised lines: invisible characters removed, any run of spaces one space, stripped.

Every text format passes its whole text through :func:`split_lines` once, which makes it the parsers' hottest
loop: it is compiled from ``_lines.c`` when the package is installed (``pip install -e .``, with a C compiler),
and :func:`split_lines_py` is the same in Python, used when no compiled module was built. A test checks that
the two agree with the definition on the real codes and on generated text; :data:`COMPILED` says which is in
use.

Definitions: a line is what ``str.splitlines`` gives, a space what ``str.split`` splits on, an invisible
character one of :data:`INVISIBLE_CHARS` (control and zero-width characters, which are removed before the
spaces are squeezed, so ``"a\\u200bb"`` is ``"ab"``).
"""

from __future__ import annotations

import array
import itertools
import re
from dataclasses import dataclass

INVISIBLE_CHARS = "".join(map(chr, [*range(0x09), *range(0x0e, 0x20), 0x7f, 0x200b, 0xfeff, 0xfffe]))
INVISIBLE = re.compile(f"[{re.escape(INVISIBLE_CHARS)}]")
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines's


@dataclass
class Lines:
    """A text's lines: normalised, joined for a scan, where each one ends in the text and starts in the joined
    text."""

    text: str
    lines: list[str]  # normalised (:func:`normalize`)
    joined: str  # "\n" + "\n".join(lines): a pattern starting with "\n" finds line starts in one scan
    ends: memoryview  # int64: where line i ends in the text, after its line break
    starts: memoryview  # int64: where line i starts in joined (after its "\n")

    def raw(self, i: int) -> str:
        """Line ``i`` as it is in the text (``text.splitlines()[i]``)."""
        return self.text[self.ends[i - 1] if i else 0:self.ends[i]].rstrip(LINE_BREAKS)  # (a line holds none)


def normalize(line: str) -> str:
    """One line with invisible characters removed and any run of spaces (tabs, em spaces) as one space."""
    if line.isprintable():  # the common case: no control, format or non-space whitespace character
        return " ".join(line.split())
    joined = " ".join(line.split())  # str.split() splits on what \s matches: tabs, em spaces, ...
    if joined.isprintable() and "\x1f" not in line:  # only odd spaces (\x1f is both a space and invisible)
        return joined
    return " ".join(INVISIBLE.sub("", line).split())


def split_lines(text: str) -> Lines:
    """The lines of ``text``, normalised (:func:`normalize` of each of ``text.splitlines()``)."""
    lines, joined, ends, starts = _split(text)
    return Lines(text, lines, joined, memoryview(ends).cast("q"), memoryview(starts).cast("q"))


def split_lines_py(text: str) -> tuple[list[str], str, bytes, bytes]:
    """What the compiled ``_lines.split_lines`` returns, in Python: (lines, joined, ends and starts as int64
    bytes)."""
    if not isinstance(text, str):
        raise TypeError(f"split_lines() expects str, not {type(text).__name__}")
    if any(c in text for c in INVISIBLE_CHARS):
        squeeze = normalize
    else:
        def squeeze(line: str) -> str:
            return " ".join(line.split())
    # a printable line holds no space but " ": stripped and without a double space, it is normalised
    lines = [line if line.isprintable() and "  " not in line else squeeze(line)
             for line in map(str.strip, text.splitlines())]
    ends = array.array("q", itertools.accumulate(map(len, text.splitlines(keepends=True))))
    starts = array.array("q", itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=1) if lines else ())
    return lines, "\n" + "\n".join(lines), ends.tobytes(), starts.tobytes()


try:
    from ._lines import split_lines as _split
except ImportError:  # installed without a C compiler: the same, slower
    _split = split_lines_py
COMPILED = _split is not split_lines_py
