"""The compiled line normaliser (``formats/_lines.c``) is built, and gives what its Python definition gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from neurips26.corpora.locus.formats import lines
from neurips26.corpora.locus.formats.base import decode_text
from neurips26.corpora.locus.formats.lines import INVISIBLE, split_lines, split_lines_py

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "locus" / "sample"

# Every kind of character the definition tells apart: line breaks (str.splitlines), spaces (str.split), invisible
# characters (removed first; \x1f is also a space to str.split), letters of the three string widths.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
SPACES = " \t\xa0\u1680\u2002\u2003\u200a\u202f\u205f\u3000"
INVISIBLE_SOME = "\x00\x07\x0e\x1b\x1f\x7f\u200b\ufeff\ufffe"
LETTERS = "aZ0.()§—é€\U0001f600"


def definition(text: str) -> list[str]:
    """What the normalised lines of :func:`lines.split_lines` are."""
    return [" ".join(INVISIBLE.sub("", line).split()) for line in text.splitlines()]


def check(text: str) -> None:
    """Both implementations give the definition's lines, those lines joined, and each raw line's place."""
    compiled = split_lines(text)
    found_lines, joined, ends, starts = split_lines_py(text)
    python = lines.Lines(text, found_lines, joined, memoryview(ends).cast("q"), memoryview(starts).cast("q"))
    for found in (compiled, python):
        assert found.lines == definition(text)
        assert found.joined == "\n" + "\n".join(found.lines)
        assert [found.raw(i) for i in range(len(found.lines))] == text.splitlines()
        assert len(found.ends) == len(found.starts) == len(found.lines)
        assert all(found.joined[start - 1] == "\n" and found.joined[start:start + len(line)] == line
                   for start, line in zip(found.starts, found.lines, strict=True))


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="no C compiler: the install falls back to the Python normaliser")
def test_the_compiled_normaliser_is_installed() -> None:
    assert lines.COMPILED, "formats/_lines.c was not built: reinstall with `pip install -e .` (needs a C compiler)"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(LINE_BREAKS + SPACES + INVISIBLE_SOME + LETTERS), max_size=60))
def test_both_normalisers_follow_the_definition(text: str) -> None:
    check(text)


@pytest.mark.parametrize("text", ["", "\n", "\r\n", "a\r\nb\r", "\r\r\n", "  \t ", "x\u200by", "x\x1fy", "x \x1f y",
                                  "\ufeffSec. 1. - A.\u2003(a)\u00a0B", "\U0001f600 \u2003 \U0001f600\n\u2028é"])
def test_edge_cases(text: str) -> None:
    check(text)


def test_the_real_codes_normalise_alike(locus_raw: Path) -> None:
    files = [p for root in (locus_raw, SAMPLE) for p in sorted(root.rglob("*"))
             if p.suffix in (".txt", ".xml", ".html") and p.is_file()]
    assert len(files) > 100
    for path in files:
        text = decode_text(path.read_bytes(), path)
        compiled, python = split_lines(text), split_lines_py(text)
        assert (compiled.lines, compiled.joined, compiled.ends.tobytes(), compiled.starts.tobytes()) == python, path


def test_a_wrong_argument_is_a_type_error() -> None:
    for split in (split_lines, split_lines_py):
        with pytest.raises(TypeError, match="expects str, not bytes"):
            split(b"Sec. 1. - A.")  # type: ignore[arg-type]
