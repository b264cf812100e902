"""Closed contours as elliptic Fourier coefficients (Kuhl & Giardina 1982), areas and volumes from them, ejection
fraction, and contour distances: the metrics of Fourier Contour Learning in cardiac MRI.

* :func:`fit` gives the ``(K, 4)`` coefficients ``(a_k, b_k, c_k, d_k)`` of a closed polygon, equal to
  ``pyefd.elliptic_fourier_descriptors(..., normalize=False)``, and :func:`offset` its centre ``(A0, C0)``.
* :func:`area` is the enclosed area in closed form, ``π Σ_k (a_k d_k - b_k c_k)`` (signed by orientation; the
  absolute value is returned): no rasterisation.
* :func:`volume` stacks slice areas (the modified Simpson / disc summation rule, ``Σ A_i h``) and
  :func:`ejection_fraction` is ``100 (EDV - ESV) / EDV``.
* :func:`hausdorff` and :func:`mean_distance` compare two contours as curves (every point of one against the
  segments of the other), not as vertex sets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .core import GeometryError


def _contour(points: np.ndarray, name: str = "contour") -> np.ndarray:
    p = np.asarray(points, float)
    if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 3:
        raise GeometryError(f"{name}: need an (N, 2) array of N >= 3 points, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise GeometryError(f"{name}: contains NaN or infinite coordinates")
    if np.allclose(p[0], p[-1]):
        p = p[:-1]  # a closing point repeated
    return p


def fit(points: np.ndarray, harmonics: int = 10) -> np.ndarray:
    """Elliptic Fourier coefficients ``(harmonics, 4)`` of the closed polygon through ``points``."""
    p = _contour(points)
    if harmonics < 1:
        raise GeometryError(f"harmonics {harmonics}: must be at least 1")
    closed = np.vstack([p, p[:1]])
    d = np.diff(closed, axis=0)
    dt = np.hypot(d[:, 0], d[:, 1])
    keep = dt > 0
    d, dt = d[keep], dt[keep]
    t = np.concatenate([[0.0], np.cumsum(dt)])
    period = t[-1]
    n = np.arange(1, harmonics + 1)[:, None]
    phi = 2 * np.pi * t[None, :] / period
    dcos = np.cos(n * phi[:, 1:]) - np.cos(n * phi[:, :-1])
    dsin = np.sin(n * phi[:, 1:]) - np.sin(n * phi[:, :-1])
    const = period / (2 * n ** 2 * np.pi ** 2)
    rx, ry = d[:, 0] / dt, d[:, 1] / dt
    return np.hstack([const * (dcos @ rx)[:, None], const * (dsin @ rx)[:, None],
                      const * (dcos @ ry)[:, None], const * (dsin @ ry)[:, None]])


def offset(points: np.ndarray) -> np.ndarray:
    """The zeroth coefficients ``(A0, C0)``: the centroid of the contour as a uniform-speed curve."""
    p = _contour(points)
    closed = np.vstack([p, p[:1]])
    dt = np.hypot(*np.diff(closed, axis=0).T)
    mid = (closed[1:] + closed[:-1]) / 2
    return (mid * dt[:, None]).sum(axis=0) / dt.sum()


def reconstruct(coefficients: np.ndarray, centre: Sequence[float] = (0.0, 0.0), n_points: int = 256) -> np.ndarray:
    """``n_points`` points of the contour the coefficients describe, at uniform parameter steps."""
    c = np.asarray(coefficients, float)
    t = np.linspace(0, 2 * np.pi, n_points, endpoint=False)
    n = np.arange(1, c.shape[0] + 1)
    cos, sin = np.cos(np.outer(t, n)), np.sin(np.outer(t, n))
    return np.column_stack([centre[0] + cos @ c[:, 0] + sin @ c[:, 1], centre[1] + cos @ c[:, 2] + sin @ c[:, 3]])


def area(coefficients: np.ndarray) -> float:
    """The enclosed area in closed form: ``|π Σ_k (a_k d_k - b_k c_k)|``."""
    c = np.asarray(coefficients, float)
    if c.ndim != 2 or c.shape[1] != 4:
        raise GeometryError(f"coefficients: need a (K, 4) array, got shape {c.shape}")
    return float(abs(np.pi * np.sum(c[:, 0] * c[:, 3] - c[:, 1] * c[:, 2])))


def polygon_area(points: np.ndarray) -> float:
    """The shoelace area of the polygon through ``points`` (the no-smoothing reference)."""
    p = _contour(points)
    x, y = p[:, 0], p[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def volume(slice_areas: Sequence[float], thickness: float) -> float:
    """Disc summation: ``Σ A_i h`` over short-axis slices of thickness ``h`` (the clinical Simpson's rule)."""
    if thickness <= 0:
        raise GeometryError(f"slice thickness {thickness}: must be positive")
    return float(np.sum(slice_areas) * thickness)


def ejection_fraction(edv: float, esv: float) -> float:
    """``100 (EDV - ESV) / EDV`` in percent."""
    if edv <= 0:
        raise GeometryError(f"end-diastolic volume {edv}: must be positive")
    return float(100 * (edv - esv) / edv)


def _point_to_segments(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Distance from each point to the closed polygon (its nearest segment)."""
    a = polygon
    b = np.roll(polygon, -1, axis=0)
    ab = b - a
    ap = points[:, None, :] - a[None, :, :]
    t = np.clip((ap * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-300), 0, 1)
    nearest = a[None] + t[..., None] * ab[None]
    return np.sqrt(((points[:, None, :] - nearest) ** 2).sum(-1)).min(axis=1)


def distances(pred: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each prediction vertex's distance to the truth polygon, each truth vertex's to the prediction polygon)."""
    p, t = _contour(pred, "prediction"), _contour(truth, "truth")
    return _point_to_segments(p, t), _point_to_segments(t, p)


def hausdorff(pred: np.ndarray, truth: np.ndarray) -> float:
    """Symmetric Hausdorff distance between the two closed polygons (vertices of each to segments of the other)."""
    a, b = distances(pred, truth)
    return float(max(a.max(), b.max()))


def mean_distance(pred: np.ndarray, truth: np.ndarray) -> float:
    """Mean perpendicular distance: the mean over both contours' vertices of the distance to the other contour
    (resample both densely and evenly first for a length-weighted mean)."""
    a, b = distances(pred, truth)
    return float(np.concatenate([a, b]).mean())


def resample(points: np.ndarray, n_points: int = 256) -> np.ndarray:
    """``n_points`` points evenly spaced along the closed polygon's length."""
    p = _contour(points)
    closed = np.vstack([p, p[:1]])
    t = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(closed, axis=0).T))])
    s = np.linspace(0, t[-1], n_points, endpoint=False)
    return np.column_stack([np.interp(s, t, closed[:, 0]), np.interp(s, t, closed[:, 1])])


def scores(pred: np.ndarray, truth: np.ndarray, harmonics: int | None = None) -> dict[str, float]:
    """Contour metrics of one predicted contour against the truth (both resampled to 256 even points); with
    ``harmonics``, the prediction is replaced by its K-harmonic elliptic Fourier fit first."""
    p, t = resample(pred), resample(truth)
    if harmonics is not None:
        p = reconstruct(fit(p, harmonics), offset(p))
    true_area = polygon_area(t)
    a, b = distances(p, t)
    return {"hausdorff": float(max(a.max(), b.max())), "mean_distance": float(np.concatenate([a, b]).mean()),
            "area_pred": polygon_area(p),
            "area_truth": true_area, "area_rel_error": abs(polygon_area(p) - true_area) / true_area}
