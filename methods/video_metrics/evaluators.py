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

METRICS_DIR = Path(__file__).resolve().parent / "metrics"
EVALUATORS: dict[str, str] = {
    "video_accuracy": "Multiple-choice accuracy with Video-MME answer extraction",
    "temporal_iou": "Mean temporal IoU and recall at IoU 0.3/0.5/0.7",
    "video_rouge": "ROUGE-L F1 for open-ended and description answers",
    "tar_score": "TAR per-task metrics, group means and the aggregate TAR score",
    "clovr_score": "CLoVR-Bench accuracy overall and per level, task and subtask",
}


def evaluator_path(name: str) -> Path:
    """Folder of evaluator ``name`` (what ``evaluate.load`` takes)."""
    if name not in EVALUATORS:
        raise ValueError(f"unknown evaluator {name!r}; known: {', '.join(EVALUATORS)}")
    return METRICS_DIR / name


def load(name: str, **kwargs: Any):
    """``evaluate.load`` of evaluator ``name``."""
    import evaluate

    return evaluate.load(str(evaluator_path(name)), **kwargs)
