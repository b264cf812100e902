"""Size and nesting limits of submitted JSON, as :class:`SubmissionRejected` problems.

The reading itself is :mod:`neurips26.jsonfile` (the one reader of outside JSON, with its depth and size
checks); this module only turns its :class:`~neurips26.jsonfile.JsonFileError` into a problem of the submission.
"""

from __future__ import annotations

from typing import Any

from neurips26 import jsonfile
from neurips26.jsonfile import JsonFileError

from .modelinfo import SubmissionRejected

MAX_DEPTH = jsonfile.MAX_DEPTH
json_depth = jsonfile.depth


def check_json(data: bytes, where: str, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`SubmissionRejected` naming ``where`` when ``data`` is over ``max_bytes`` or nested deeper
    than ``max_depth``."""
    try:
        jsonfile.check(data, where, max_bytes, max_depth)
    except JsonFileError as exc:
        raise SubmissionRejected([(exc.where, exc.why)]) from None


def check_jsonl(data: bytes, where: str, max_depth: int = MAX_DEPTH) -> None:
    """:func:`check_json` for each line of a JSON Lines file (the reason names the line)."""
    for line_no, line in enumerate(data.splitlines(), 1):
        check_json(line, f"{where}:{line_no}", max_depth=max_depth)


def loads(data: bytes, where: str, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> Any:
    """:func:`neurips26.jsonfile.loads`, its failure a :class:`SubmissionRejected`."""
    try:
        return jsonfile.loads(data, where, max_bytes, max_depth)
    except JsonFileError as exc:
        raise SubmissionRejected([(exc.where, exc.why)]) from None
