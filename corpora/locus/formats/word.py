"""Word exports of Municode codes: ``.docx`` (``word-docx``) and Word 97-2003 ``.doc`` (``word-doc``).

Both carry the text of a Municode full-text export (``Sec. N. - Heading.`` paragraphs, ``ARTICLE``/``Chapter``
heading paragraphs), so once the text is out the Municode assembly reads it (:mod:`.municode`).

- ``.docx``: detected from content (a ZIP holding ``word/document.xml``); the body's paragraphs and table cells,
  in document order, read with ``python-docx``.
- ``.doc``: detected from content (an OLE2 compound file with a ``WordDocument`` stream); converted with Debian's
  ``antiword`` (``scripts/setup`` installs it). Without it the file is rejected with a one-line hint, never
  silently.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

from .base import FORMATS, OLE2_MAGIC, Folder, FormatError, Section
from .municode import sections_from_text

WORD_STREAM = "WordDocument".encode("utf-16-le")  # the stream name, as the OLE2 directory stores it
ANTIWORD_HINT = "install Debian's antiword (apt-get install antiword; scripts/setup does it as root)"
ANTIWORD_TIMEOUT_S = 300


def _sniff_docx(data: bytes, path: Path) -> bool:
    return data.startswith(b"PK\x03\x04") and b"word/document.xml" in data


def _sniff_doc(data: bytes, path: Path) -> bool:
    return data.startswith(OLE2_MAGIC) and WORD_STREAM in data


def docx_text(data: bytes, path: Path) -> str:
    """The text of a .docx: paragraphs and table cells of the body, one per line, in document order."""
    import docx  # python-docx; imported here since only Word inputs need it
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise FormatError(f"not a readable .docx: {exc}") from None
    lines: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            lines.append(block.text)
        elif isinstance(block, Table):
            lines.extend(cell.text for row in block.rows for cell in row.cells)
    return "\n".join(lines)


def doc_text(path: Path) -> str:
    """The text of a Word 97-2003 .doc, from ``antiword`` (UTF-8, no line wrapping)."""
    if shutil.which("antiword") is None:
        raise FormatError(f"Word 97-2003 .doc needs antiword, which is not installed: {ANTIWORD_HINT}")
    try:
        done = subprocess.run(["antiword", "-m", "UTF-8.txt", "-w", "0", str(path)], capture_output=True,
                              timeout=ANTIWORD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise FormatError(f"antiword took longer than {ANTIWORD_TIMEOUT_S} s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise FormatError(f"antiword could not read it: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout.decode("utf-8", "replace")


@FORMATS.register("word-docx", sniff=_sniff_docx, extensions=(".docx",))
def parse_docx(path: Path, folder: Folder) -> Iterator[Section]:
    """Sections of a Word .docx export of a Municode code."""
    yield from sections_from_text(docx_text(path.read_bytes(), path), folder, path)


@FORMATS.register("word-doc", sniff=_sniff_doc, extensions=(".doc",))
def parse_doc(path: Path, folder: Folder) -> Iterator[Section]:
    """Sections of a Word 97-2003 .doc export of a Municode code (text by antiword)."""
    yield from sections_from_text(doc_text(path), folder, path)
