"""The registry of geometry evaluators and what every family shares: the error type and the 95% interval.

    @GEOMETRY_EVALUATORS.register("segmentation", inputs="masks")
    def evaluate_masks(pred: Path, truth: Path, **options) -> dict[str, float]: ...

Each registered function reads a user's prediction and ground-truth files and returns the family's metrics
(``neurips26 geometry eval --metric <name> PRED TRUTH``). This module imports nothing else of its package.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from neurips26.errors import UserError
from neurips26.registry import Registry

GEOMETRY_EVALUATORS: Registry[Callable[..., dict[str, Any]]] = Registry(
    "geometry evaluator", group="neurips26.geometry_evaluators")


class GeometryError(UserError):
    """Input a geometry metric cannot score: a bad shape, spacing, file or value, named in the message."""


def mean_ci(values: Sequence[float], n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """The mean of per-document values and its 95% percentile-bootstrap interval (fixed seed: reproducible)."""
    x = np.asarray(values, float)
    if x.size == 0:
        raise GeometryError("no values to summarise")
    if x.size == 1:
        return float(x[0]), float(x[0]), float(x[0])
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, (n_boot, x.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(x.mean()), float(low), float(high)


def as_spacing(spacing: float | Sequence[float] | None, ndim: int) -> np.ndarray:
    """Voxel spacing as one positive number per axis (``None``: 1 per axis; a scalar: isotropic)."""
    if spacing is None:
        return np.ones(ndim)
    s = np.broadcast_to(np.asarray(spacing, float), (ndim,)) if np.ndim(spacing) == 0 else np.asarray(spacing, float)
    if s.shape != (ndim,) or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise GeometryError(f"spacing {list(np.atleast_1d(spacing))}: need {ndim} positive numbers, one per axis")
    return s
