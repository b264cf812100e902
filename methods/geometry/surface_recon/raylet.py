"""Raylet refinement with analytic normals: each coarse depth is refined on a short segment of its ray.

Around the coarse point ``x0 = t0 d`` of a ray, the context surfels (query and reference views) are weighed by
confidence and a Gaussian of their distance to ``x0`` (bandwidth ``bandwidth`` x the pixel footprint at ``t0``),
and an algebraic sphere ``s(x) = u0 + u.x + u4 |x|^2`` is fitted to their positions and normals in closed form
(algebraic point set surfaces, Guennebaud and Gross 2007: ``grad s`` matches the normals, ``s`` vanishes on
average at the points; a plane when ``u4`` = 0). The raylet is the segment ``[t0 - L, t0 + L]``; the refined depth
is the root of ``s(t d) = 0`` in it nearest ``t0`` (none: ``t0`` kept), refitted ``iterations`` times. The normal
is analytic, ``grad s = u + 2 u4 x`` at the refined point, turned to face the camera; on a sphere the fit is the
sphere itself, so the normals are the sphere's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RayletConfig:
    """Kernel bandwidth (pixel footprints), raylet half-length (share of the depth) and refits."""

    bandwidth: float = 2.0
    half_length: float = 0.05
    iterations: int = 2


def fit_spheres(points: np.ndarray, normals: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, ...]:
    """Closed-form algebraic spheres ``(u0 (R,), u (R, 3), u4 (R,))`` fitted to ``points`` and ``normals``
    ``(R, K, 3)`` with ``weights`` ``(R, K)``; a plane where the points do not spread."""
    w = weights / np.maximum(weights.sum(-1, keepdims=True), 1e-300)
    mean_p = (w[..., None] * points).sum(1)
    mean_n = (w[..., None] * normals).sum(1)
    mean_pn = (w * (points * normals).sum(-1)).sum(1)
    mean_pp = (w * (points * points).sum(-1)).sum(1)
    spread = mean_pp - (mean_p * mean_p).sum(-1)
    scale = np.maximum((w * ((points - mean_p[:, None]) ** 2).sum(-1)).sum(1), 0.0)
    ok = spread > 1e-10 * np.maximum(mean_pp, 1e-30)
    u4 = np.where(ok, 0.5 * (mean_pn - (mean_p * mean_n).sum(-1)) / np.where(ok, spread, 1.0), 0.0)
    u4 = np.where(scale > 0, u4, 0.0)
    u = mean_n - 2 * u4[:, None] * mean_p
    u0 = -(u * mean_p).sum(-1) - u4 * mean_pp
    return u0, u, u4


def intersect(u0: np.ndarray, u: np.ndarray, u4: np.ndarray, directions: np.ndarray, t0: np.ndarray,
              half_length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(depth, hit) of each ray ``t d`` (from the origin) with its algebraic sphere: the root nearest ``t0``
    within ``half_length`` of it; ``t0`` and False where there is none."""
    a = u4 * (directions * directions).sum(-1)
    b = (u * directions).sum(-1)
    c = u0
    linear = np.abs(a) * np.maximum(np.abs(t0), 1e-12) < 1e-9 * np.maximum(np.abs(b), 1e-30)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_linear = -c / b
        root = np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))
        q = -0.5 * (b + np.copysign(root, b))  # stable quadratic roots: q / a and c / q
        first, second = q / a, c / q
    real = (b * b - 4 * a * c) >= 0
    nearest = np.where(np.abs(first - t0) <= np.abs(second - t0), first, second)
    t = np.where(linear, t_linear, np.where(real, nearest, np.nan))
    hit = np.isfinite(t) & (np.abs(t - t0) <= half_length)
    return np.where(hit, t, t0), hit


def analytic_normals(u: np.ndarray, u4: np.ndarray, points: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Unit ``grad s`` at ``points`` ``(R, 3)``, facing back along ``directions`` (towards the camera)."""
    gradient = u + 2 * u4[:, None] * points
    gradient /= np.maximum(np.linalg.norm(gradient, axis=-1, keepdims=True), 1e-12)
    return gradient * np.where((gradient * directions).sum(-1, keepdims=True) > 0, -1.0, 1.0)


def refine(directions: np.ndarray, t0: np.ndarray, positions: np.ndarray, normals: np.ndarray,
           confidence: np.ndarray, footprint: float, config: RayletConfig = RayletConfig()
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(refined depths ``(R,)``, analytic normals ``(R, 3)``, hit ``(R,)``) of rays ``directions`` ``(R, 3)`` from
    coarse depths ``t0``, with the surfels ``positions``/``normals`` ``(R, K, 3)`` and ``confidence`` ``(R, K)``
    (0: none) around them; ``footprint`` is one pixel's width per unit depth."""
    t = np.asarray(t0, float).copy()
    half_length = config.half_length * np.abs(t0)
    hit = np.zeros(len(t), bool)
    u0 = u4 = np.zeros(len(t))
    u = -directions
    for _ in range(max(config.iterations, 1)):
        centre = t[:, None] * directions
        h = config.bandwidth * footprint * np.abs(t)
        distance = ((positions - centre[:, None]) ** 2).sum(-1)
        weights = confidence * np.exp(-distance / np.maximum(h * h, 1e-30)[:, None])
        fitted = weights.sum(-1) > 1e-8
        u0, u, u4 = fit_spheres(positions, normals, np.where(fitted[:, None], weights, confidence))
        moved, hit = intersect(u0, u, u4, directions, t0, half_length)
        t = np.where(fitted, moved, t)
        hit &= fitted
    return t, analytic_normals(u, u4, t[:, None] * directions, directions), hit
