"""The registry of the geometry papers' trainable methods (``neurips26 geometry train|eval``).

Each method lives in its own subpackage and registers one training function where it is defined::

    @GEOMETRY_METHODS.register("fractal-g", family="segmentation", evaluate=evaluate_checkpoint,
                               summary="Fractal-G plug-in on a small U-Net")
    def train(scale: str, out: Path, *, seed: int = 0, device: str = "auto",
              progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        '''Train at ``scale`` (tiny | default | large), write ``out/checkpoint.pt`` and ``out/metrics.json``.'''

``train`` writes the checkpoint and a JSON of its metrics (the method beside the baselines it must beat, on the
same held-out data) and returns that JSON's content; ``evaluate(out)`` re-scores a trained folder and returns
the same shape. Each method's ``train`` module is named by a ``neurips26.geometry_methods`` entry point
(``pyproject.toml``), imported on the first lookup. ``metrics.json`` always holds ``method``, ``scale``, ``seed``,
``device``, ``data`` (which parts are generated and which are real) and ``rows`` (one per arm: the method and each
baseline, with its metrics).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from neurips26 import models
from neurips26.registry import Registry

from .core import GeometryError

SCALES = ("tiny", "default", "large")
Trainer = Callable[..., dict[str, Any]]


def _check(name: str, info: dict[str, Any]) -> None:
    if not callable(info.get("evaluate")) or "family" not in info:
        raise ValueError(f"geometry method {name!r}: register with family= and evaluate=")


GEOMETRY_METHODS: Registry[Trainer] = Registry("geometry method", group="neurips26.geometry_methods", check=_check)


def device(name: str = "auto") -> torch.device:
    """``auto``: CUDA when present, else the CPU; else ``name`` when this machine has it (:func:`models.device`)."""
    return torch.device(models.device(name))


def read_metrics(out: Path) -> dict[str, Any]:
    """A trained folder's ``metrics.json``; GeometryError names what is missing."""
    import json

    path = Path(out) / "metrics.json"
    if not path.is_file():
        raise GeometryError(f"{out}: no metrics.json (train first: neurips26 geometry train METHOD --out {out})")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GeometryError(f"{path}: not a metrics file ({exc})") from None


def read_checkpoint(out: Path, method: str) -> dict[str, Any]:
    """A trained folder's ``checkpoint.pt``, written by ``method``'s ``train``; GeometryError when it is not one.
    Read with ``weights_only=True``: a checkpoint from elsewhere holds tensors and plain values, never code."""
    path = Path(out) / "checkpoint.pt"
    if not path.is_file():
        raise GeometryError(f"{out}: no checkpoint.pt (train first: neurips26 geometry train {method} --out {out})")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a file torch cannot read, or one holding objects beyond tensors and plain values
        raise GeometryError(f"{path}: not a readable checkpoint ({type(exc).__name__})") from None
    if not isinstance(checkpoint, dict) or checkpoint.get("method", method) != method:
        raise GeometryError(f"{path}: not a {method} checkpoint")
    return checkpoint
