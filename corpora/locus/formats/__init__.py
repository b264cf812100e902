"""Raw ordinance-code formats: detection from content and parsing into sections.

The base types and the :data:`FORMATS` registry live in :mod:`.base`; each format module registers its
parser there. Importing this package imports every format module, so :data:`FORMATS` is complete.
"""

from __future__ import annotations

from . import dc_xml, encodeplus, html_toc, municode, pdf, tei, word
from .base import (
    FORMATS,
    SNIFF_BYTES,
    STATUSES,
    Folder,
    Format,
    FormatError,
    Section,
    decode_text,
    detect,
    get_format,
)

__all__ = ["FORMATS", "SNIFF_BYTES", "STATUSES", "Folder", "Format", "FormatError", "Section", "decode_text",
           "detect", "get_format", "dc_xml", "encodeplus", "html_toc", "municode", "pdf", "tei", "word"]
