"""The LOCUS gold set's ``dev`` part: reading and checking ``dev.jsonl``.

The gold folder (``settings.locus_gold_dir()``; ``NEURIPS26_LOCUS_GOLD``) holds 90 real sections labelled in
three independent passes with the LOCUS-v1 codebook: majority labels, vote counts and every annotator's
labels. The build writes its ``*_gold`` evaluation configs from it (``build(gold=DIR)``); the analysis layer
measures its scorers against it (``methods/locus_analysis/gold.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from neurips26.errors import UserError

from .records import FUNCTIONS, TOPICS

GOLD_FILE = "dev.jsonl"
REQUIRED = ("gid", "jurisdiction_id", "number", "heading", "text", "function_majority", "topic_majority",
            "is_substantive", "opacity_mean", "paternalism_mean", "max_fine_usd", "max_jail_days")


class GoldError(UserError):
    """The gold folder is missing or a row of ``dev.jsonl`` is unusable (the message names file and line)."""


def read_gold(gold_dir: Path) -> list[dict]:
    """The gold ``dev`` rows, checked: every required field present, labels from the codebook's sets."""
    path = Path(gold_dir) / GOLD_FILE
    if not path.is_file():
        raise GoldError(f"{path}: gold set not found (expected the LOCUS gold folder with {GOLD_FILE})")
    rows = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldError(f"{path}:{line_no}: not valid JSON ({exc.msg})") from None
        missing = [k for k in REQUIRED if k not in row]
        if missing:
            raise GoldError(f"{path}:{line_no}: missing field(s) {', '.join(missing)}")
        if row["function_majority"] not in FUNCTIONS:
            raise GoldError(f"{path}:{line_no}: function_majority {row['function_majority']!r} is not one of "
                            f"{', '.join(FUNCTIONS)}")
        if row["topic_majority"] is not None and row["topic_majority"] not in TOPICS:
            raise GoldError(f"{path}:{line_no}: topic_majority {row['topic_majority']!r} is not one of "
                            f"{', '.join(TOPICS)} or null")
        rows.append(row)
    if not rows:
        raise GoldError(f"{path}: no rows")
    return rows
