"""Each video metric as a Hugging Face ``evaluate`` module, loadable by path (the Hub's loader needs the network).

    >>> import evaluate
    >>> from neurips26.methods.video_metrics import evaluator_path
    >>> tar = evaluate.load(str(evaluator_path("tar_score")))
    >>> tar.compute(predictions=["The answer is B"], references=["B"], task_types=["mcq"])

or simply ``load("tar_score")``. The modules live in ``metrics/<name>/<name>.py``
and call :mod:`.scores`, so both give the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .core import VIDEO_SCORERS

METRICS_DIR = Path(__file__).resolve().parent / "metrics"


def evaluator_path(name: str) -> Path:
    """Folder of evaluator ``name`` (what ``evaluate.load`` takes)."""
    VIDEO_SCORERS.get(name)  # UnknownNameError lists the known ones
    return METRICS_DIR / name


def load(name: str, **kwargs: Any):
    """``evaluate.load`` of evaluator ``name``."""
    import evaluate  # lazy: Hugging Face evaluate is slow to import and optional for the scores

    return evaluate.load(str(evaluator_path(name)), **kwargs)
