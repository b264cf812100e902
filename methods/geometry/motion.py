"""Motion diversity metrics for individualized 4D heart motion (Time2Track): does a model predict each subject's
motion, or collapse to the population average?

Inputs are arrays ``(subjects, ...)`` of motion (any trailing shape, e.g. frames x landmarks x 3 displacements in
mm); ``population`` is the population-mean motion (the training subjects' mean; default: the truths' mean).

* per-subject RMSE, and the population-mean baseline's RMSE on the same subject; ``skill = 1 - rmse / rmse_mean``
  (0: no better than the population mean; clipped below at -1);
* ``collapse_ratio``: between-subject spread of the predictions / of the truths, the spread being the RMS distance
  of each subject to its set's mean (the population-mean predictor scores 0; the truth itself 1);
* ``specificity``: Pearson correlation of (prediction - population) with (truth - population), pooled over
  subjects and coordinates (0 when the predictions do not move away from the population mean);
* ``pairwise_ratio`` (mean pairwise distance between predictions / between truths) and ``pairwise_r`` (the
  correlation of the two pairwise-distance matrices, a Mantel statistic);
* ``identification``: the share of subjects whose prediction is nearer their own truth than any other subject's.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist, pdist

from .core import GeometryError


def _flat(pred: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p, t = np.asarray(pred, float), np.asarray(truth, float)
    if p.shape != t.shape:
        raise GeometryError(f"prediction shape {p.shape} differs from the truth's {t.shape}")
    if p.ndim < 2 or p.shape[0] < 2:
        raise GeometryError(f"motion arrays need shape (subjects >= 2, ...), got {p.shape}")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(t))):
        raise GeometryError("motion arrays contain NaN or infinite values")
    return p.reshape(p.shape[0], -1), t.reshape(t.shape[0], -1)


def rmse(pred: np.ndarray, truth: np.ndarray, points: int = 1) -> np.ndarray:
    """Per-subject RMS error over frames and landmarks, ``points`` coordinates making one point's distance."""
    p, t = _flat(pred, truth)
    return np.sqrt(((p - t) ** 2).sum(axis=1) * points / p.shape[1])


def spread(x: np.ndarray) -> float:
    """Between-subject spread: RMS distance of each subject's motion to the set's mean motion."""
    x = x.reshape(x.shape[0], -1)
    return float(np.sqrt(((x - x.mean(axis=0)) ** 2).sum(axis=1).mean()))


def collapse_ratio(pred: np.ndarray, truth: np.ndarray) -> float:
    """Spread of the predictions / spread of the truths (0: every subject gets the same motion)."""
    p, t = _flat(pred, truth)
    return spread(p) / max(spread(t), 1e-12)


def specificity(pred: np.ndarray, truth: np.ndarray, population: np.ndarray | None = None) -> float:
    """Correlation of the predictions' and truths' deviations from the population mean (0 when either is flat)."""
    p, t = _flat(pred, truth)
    m = t.mean(axis=0) if population is None else np.asarray(population, float).reshape(-1)
    dp, dt = (p - m).ravel(), (t - m).ravel()
    dp, dt = dp - dp.mean(), dt - dt.mean()
    a, b = np.linalg.norm(dp), np.linalg.norm(dt)
    if a <= 1e-9 * b or b == 0:  # the predictions do not leave the population mean (beyond rounding)
        return 0.0
    return float(dp @ dt / (a * b))


def pairwise(pred: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """(mean pairwise distance of predictions / of truths, correlation of the two distance matrices)."""
    p, t = _flat(pred, truth)
    dp, dt = pdist(p), pdist(t)
    ratio = float(dp.mean() / max(dt.mean(), 1e-12))
    r = 0.0 if dp.std() < 1e-12 or dt.std() < 1e-12 else float(np.corrcoef(dp, dt)[0, 1])
    return ratio, r


def identification(pred: np.ndarray, truth: np.ndarray) -> float:
    """Share of subjects whose prediction is strictly nearest to their own truth (ties count as misses)."""
    p, t = _flat(pred, truth)
    d = cdist(p, t)
    own = np.diag(d)
    others = np.where(np.eye(len(d), dtype=bool), np.inf, d).min(axis=1)
    return float(np.mean(own < others))


def per_subject(pred: np.ndarray, truth: np.ndarray, population: np.ndarray | None = None,
                points: int = 3) -> dict[str, np.ndarray]:
    """Per-subject RMSE of the prediction and of the population mean, and the skill between them."""
    p, t = _flat(pred, truth)
    m = t.mean(axis=0) if population is None else np.asarray(population, float).reshape(-1)
    error = rmse(p, t, points)
    base = rmse(np.broadcast_to(m, t.shape), t, points)
    return {"rmse": error, "rmse_mean": base, "skill": np.clip(1 - error / np.maximum(base, 1e-12), -1.0, 1.0)}


def scores(pred: np.ndarray, truth: np.ndarray, population: np.ndarray | None = None,
           points: int = 3) -> dict[str, float]:
    """Every motion metric over a set of subjects (means of the per-subject values, and the set-level ones)."""
    each = per_subject(pred, truth, population, points)
    ratio, r = pairwise(pred, truth)
    return {"rmse": float(each["rmse"].mean()), "rmse_mean": float(each["rmse_mean"].mean()),
            "skill": float(each["skill"].mean()), "collapse_ratio": collapse_ratio(pred, truth),
            "specificity": specificity(pred, truth, population), "pairwise_ratio": ratio, "pairwise_r": r,
            "identification": identification(pred, truth)}
