"""Raw ordinance-code formats: detection from content and parsing into sections.

The base types and the :data:`FORMATS` registry live in :mod:`.base`; each format module registers its
parser there. The registry imports the format modules (its ``neurips26.locus_formats`` entry points, in
``pyproject.toml``) on its first lookup, so this package imports none of them: a format module importing a
sibling (``from .municode import ...``) runs this file first, and an eager import here would make every format
module part of one import cycle.
"""

from __future__ import annotations

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
           "detect", "get_format"]
