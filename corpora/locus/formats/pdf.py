"""PDF prints of ordinance codes (``pdf``): the text layer, OCR for pages without one.

Each page's text comes from pdfium's text layer; a page with no text (a scan)
is rendered at 300 dpi and read with Tesseract when the ``tesseract`` binary is
installed. The joined text then goes through the Municode text assembly
(:func:`~.municode.sections_from_text`), which also drops the page headers and
page numbers that a browser print adds.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pypdfium2 as pdfium

from .base import FORMATS, Folder, FormatError, Section
from .municode import sections_from_text

OCR_DPI = 300
OCR_HINT = "install Debian's tesseract-ocr tesseract-ocr-eng"


def sniff(head: bytes, path: Path) -> bool:
    return head.startswith(b"%PDF-")


def _ocr(page: pdfium.PdfPage, number: int) -> str:
    """Text of a page rendered at OCR_DPI and read by Tesseract."""
    if shutil.which("tesseract") is None:
        raise FormatError(f"page {number} has no text layer and OCR is unavailable: {OCR_HINT}")
    import pytesseract

    image = page.render(scale=OCR_DPI / 72).to_pil()
    try:
        return pytesseract.image_to_string(image, lang="eng")
    except pytesseract.TesseractError as exc:
        raise FormatError(f"OCR failed on page {number}: {exc.message.strip() or exc}") from None


def _page_text(page: pdfium.PdfPage, number: int) -> str:
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
    finally:
        textpage.close()
    return text if text.strip() else _ocr(page, number)


def pdf_text(path: Path) -> str:
    """The text of every page, in order (OCR where a page has no text layer)."""
    try:
        pdf = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        raise FormatError(f"corrupt or unreadable PDF: {exc}") from None
    try:
        pages = [_page_text(page, number) for number, page in enumerate(pdf, start=1)]
    except pdfium.PdfiumError as exc:
        raise FormatError(f"corrupt or unreadable PDF page: {exc}") from None
    finally:
        pdf.close()
    if not pages:
        raise FormatError("PDF has no pages")
    return "\n".join(pages)


@FORMATS.register("pdf", sniff=sniff, extensions=(".pdf",))
def parse(path: Path, folder: Folder) -> Iterator[Section]:
    """Sections of a code PDF: its text layer (or OCR), read as a Municode text export."""
    yield from sections_from_text(pdf_text(path), folder, path)
