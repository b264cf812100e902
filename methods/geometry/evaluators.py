"""Each geometry family as a Hugging Face ``evaluate`` module, loadable by path (the Hub's loader needs the
network)::

    >>> from neurips26.methods.geometry.evaluators import load
    >>> load("geometry_segmentation").compute(predictions=[mask], references=[truth], spacing=[1.0, 0.8])

The modules live in ``metrics/<name>/<name>.py`` and call the family's module, so both give the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .core import GeometryError

METRICS_DIR = Path(__file__).resolve().parent / "metrics"
NAMES = ("geometry_segmentation", "geometry_contours", "geometry_motion", "geometry_surfaces")


def evaluator_path(name: str) -> Path:
    """Folder of the ``evaluate`` module ``name`` (what ``evaluate.load`` takes)."""
    if name not in NAMES:
        raise GeometryError(f"unknown geometry evaluate module {name!r} (known: {', '.join(NAMES)})")
    return METRICS_DIR / name


def load(name: str, **kwargs: Any):
    """``evaluate.load`` of the module ``name``."""
    import evaluate  # Hugging Face evaluate is slow to import and needed only here

    return evaluate.load(str(evaluator_path(name)), **kwargs)
