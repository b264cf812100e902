"""Surface reconstruction metrics on point samples, after similarity alignment for unposed methods.

* Points are sampled uniformly on a mesh's area (:func:`sample`, seeded), with each point's face normal.
* Distances are in units of the ground truth's bounding-box diagonal, so that meshes of any size compare.
* ``accuracy``: mean distance from prediction to truth; ``completeness``: truth to prediction; ``chamfer_l1``
  their mean; ``precision``/``recall``/``fscore`` at ``tau`` (share within ``tau``; default 1% of the diagonal);
  ``normal_consistency``: mean |cos| between each point's normal and its nearest neighbour's, both ways.
* Alignment (``align=True``): Umeyama's closed-form similarity (scale, rotation, translation) inside ICP, started
  from principal axes (every proper sign flip tried) so that a prediction in an unknown frame and scale is first
  brought onto the truth; then the metrics. ``align=False`` scores the prediction where it lies.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
import trimesh
from scipy.spatial import cKDTree

from .core import GeometryError

TAU = 0.01
SAMPLES = 20_000


@dataclass(frozen=True)
class Points:
    """Points ``(n, 3)`` and, when known, their unit normals ``(n, 3)``."""

    xyz: np.ndarray
    normals: np.ndarray | None = None

    def moved(self, scale: float, rotation: np.ndarray, translation: np.ndarray) -> Points:
        """The points under ``x -> s R x + t`` (normals rotated)."""
        normals = None if self.normals is None else self.normals @ rotation.T
        return Points(scale * self.xyz @ rotation.T + translation, normals)


def sample(mesh: trimesh.Trimesh, n: int = SAMPLES, seed: int = 0) -> Points:
    """``n`` points uniformly on the mesh's area, with their faces' normals."""
    if len(mesh.faces) == 0:
        raise GeometryError("the mesh has no faces to sample")
    xyz, faces = trimesh.sample.sample_surface(mesh, n, seed=seed)
    return Points(np.asarray(xyz, float), np.asarray(mesh.face_normals[faces], float))


def umeyama(source: np.ndarray, target: np.ndarray, scaling: bool = True) -> tuple[float, np.ndarray, np.ndarray]:
    """(s, R, t) minimising ``Σ |s R x_i + t - y_i|²`` over corresponding points (Umeyama 1991)."""
    mu_x, mu_y = source.mean(axis=0), target.mean(axis=0)
    x, y = source - mu_x, target - mu_y
    u, d, vt = np.linalg.svd(y.T @ x / len(x))
    sign = np.eye(3)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        sign[2, 2] = -1
    rotation = u @ sign @ vt
    variance = (x ** 2).sum() / len(x)
    scale = float(np.trace(np.diag(d) @ sign) / variance) if scaling and variance > 0 else 1.0
    return scale, rotation, mu_y - scale * rotation @ mu_x


def _principal(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    centre = x.mean(axis=0)
    _, _, vt = np.linalg.svd(x - centre, full_matrices=False)
    return centre, vt, float(np.sqrt(((x - centre) ** 2).sum(axis=1).mean()))


def icp(source: np.ndarray, target: np.ndarray, iterations: int = 30, scaling: bool = True,
        init: tuple[float, np.ndarray, np.ndarray] | None = None) -> tuple[float, np.ndarray, np.ndarray, float]:
    """Similarity ICP from ``init``: (s, R, t, RMS nearest-neighbour distance) after convergence."""
    tree = cKDTree(target)
    s, r, t = init if init is not None else (1.0, np.eye(3), np.zeros(3))
    previous = np.inf
    for _ in range(iterations):
        moved = s * source @ r.T + t
        distance, index = tree.query(moved)
        error = float(np.sqrt(np.mean(distance ** 2)))
        if previous - error < 1e-9 * max(previous, 1e-12):
            break
        previous = error
        s, r, t = umeyama(source, target[index], scaling)
    distance, _ = tree.query(s * source @ r.T + t)
    return s, r, t, float(np.sqrt(np.mean(distance ** 2)))


def align(pred: Points, truth: Points, max_points: int = 4000, seed: int = 0) -> Points:
    """``pred`` brought onto ``truth`` by a similarity: principal-axes starts (4 proper sign flips), ICP each, the
    best kept, then refined on all points."""
    rng = np.random.default_rng(seed)
    src = pred.xyz[rng.permutation(len(pred.xyz))[:max_points]]
    dst = truth.xyz[rng.permutation(len(truth.xyz))[:max_points]]
    cs, vs, rs = _principal(src)
    ct, vt, rt = _principal(dst)
    best = None
    for signs in product((1, -1), repeat=3):
        flip = np.diag(signs)
        rotation = vt.T @ flip @ vs
        if np.linalg.det(rotation) < 0:
            continue
        scale = rt / max(rs, 1e-12)
        start = (scale, rotation, ct - scale * rotation @ cs)
        found = icp(src, dst, 20, init=start)
        if best is None or found[3] < best[3]:
            best = found
    s, r, t, _ = icp(pred.xyz, truth.xyz, 30, init=best[:3])
    return pred.moved(s, r, t)


def scores(pred: Points, truth: Points, tau: float = TAU, aligned: bool = True) -> dict[str, float]:
    """The reconstruction metrics of ``pred`` against ``truth`` (aligned first when ``aligned``)."""
    for name, p in (("prediction", pred), ("truth", truth)):
        if p.xyz.ndim != 2 or p.xyz.shape[1] != 3 or len(p.xyz) == 0 or not np.all(np.isfinite(p.xyz)):
            raise GeometryError(f"{name}: need a non-empty (n, 3) array of finite points, got {p.xyz.shape}")
    if aligned:
        pred = align(pred, truth)
    unit = float(np.linalg.norm(np.ptp(truth.xyz, axis=0))) or 1.0
    to_truth, i_truth = cKDTree(truth.xyz).query(pred.xyz)
    to_pred, i_pred = cKDTree(pred.xyz).query(truth.xyz)
    to_truth, to_pred = to_truth / unit, to_pred / unit
    precision, recall = float(np.mean(to_truth <= tau)), float(np.mean(to_pred <= tau))
    out = {"accuracy": float(to_truth.mean()), "completeness": float(to_pred.mean()),
           "chamfer_l1": float((to_truth.mean() + to_pred.mean()) / 2), "precision": precision, "recall": recall,
           "fscore": 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)}
    if pred.normals is not None and truth.normals is not None:
        a = np.abs((pred.normals * truth.normals[i_truth]).sum(axis=1))
        b = np.abs((truth.normals * pred.normals[i_pred]).sum(axis=1))
        out["normal_consistency"] = float((a.mean() + b.mean()) / 2)
    return out
