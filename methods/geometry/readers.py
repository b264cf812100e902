"""The user-facing evaluators: read a prediction and a truth file, return the family's metrics.

``neurips26 geometry eval --metric <name> PRED TRUTH`` calls the function registered as ``<name>``. Files:
masks as ``.npy``/``.npz`` (any non-zero voxel is foreground) or ``.png``; contours and point sets as ``.npy`` or
text (``.csv``, ``.txt``, ``.xyz``: one point per line); motion as ``.npy`` ``(subjects, ...)``; surfaces as meshes
(``.ply``, ``.obj``, ``.stl``, ``.off``, ``.glb``), sampled uniformly with a fixed seed, or as point files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import trimesh

from . import contours, motion, segmentation, surfaces
from .bench import MESH_SUFFIXES
from .core import GEOMETRY_EVALUATORS, GeometryError


def read_array(path: Path) -> np.ndarray:
    """An array from ``.npy``, ``.npz`` (its first array), ``.png`` or a whitespace/comma text file."""
    if not path.is_file():
        raise GeometryError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            return np.load(path, allow_pickle=False)
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                if not data.files:
                    raise GeometryError(f"{path}: the .npz holds no array")
                return data[data.files[0]]
        if suffix == ".png":
            from skimage.io import imread

            return imread(path)
        return np.loadtxt(path, delimiter="," if suffix == ".csv" else None, ndmin=2)
    except (OSError, ValueError) as error:
        raise GeometryError(f"{path}: cannot read an array ({error})") from None


@GEOMETRY_EVALUATORS.register("segmentation", inputs="masks (.npy, .npz, .png)")
def evaluate_masks(pred: Path, truth: Path, spacing: list[float] | None = None, tau: float = segmentation.TAU,
                   band: float = segmentation.BAND, cross_resolution: bool = False, **_: Any) -> dict[str, Any]:
    """Dice, IoU, HD95, ASSD, NSD, Boundary IoU and boundary F of two masks; with ``cross_resolution`` also the
    metrics on the 0.5x and 2x grids."""
    p, t = read_array(pred), read_array(truth)
    p, t = (a[..., 0] if a.ndim == 3 and a.shape[-1] in (3, 4) else a for a in (p, t))
    out: dict[str, Any] = segmentation.scores(p != 0, t != 0, spacing, tau=tau, band=band)
    if cross_resolution:
        grids = segmentation.cross_resolution(p != 0, t != 0, spacing, tau=tau, band=band)
        out.update({f"{k}@{f:g}x": v for f, row in grids.items() if f != 1.0 for k, v in row.items()})
    return out


@GEOMETRY_EVALUATORS.register("contours", inputs="closed contours, (N, 2) points (.npy, .csv, .txt)")
def evaluate_contours(pred: Path, truth: Path, harmonics: int | None = None, **_: Any) -> dict[str, Any]:
    """Hausdorff and mean perpendicular distance, areas; with ``harmonics``, of the prediction's K-harmonic fit."""
    return contours.scores(read_array(pred), read_array(truth), harmonics)


@GEOMETRY_EVALUATORS.register("motion", inputs="motion arrays (subjects, ...) (.npy)")
def evaluate_motion(pred: Path, truth: Path, population: Path | None = None, **_: Any) -> dict[str, Any]:
    """Per-subject error against the population mean, collapse ratio, specificity, pairwise diversity."""
    p, t = read_array(pred), read_array(truth)
    points = 3 if p.ndim >= 2 and p.shape[-1] == 3 else 1
    return motion.scores(p, t, None if population is None else read_array(population), points)


def read_points(path: Path, n: int, seed: int) -> surfaces.Points:
    """A mesh sampled uniformly (``n`` points with normals) or a point file (``(n, 3)``, or ``(n, 6)`` with normals)."""
    if path.suffix.lower() in MESH_SUFFIXES:
        try:
            mesh = trimesh.load(path, force="mesh")
        except (OSError, ValueError) as error:
            raise GeometryError(f"{path}: cannot read a mesh ({error})") from None
        if len(getattr(mesh, "faces", [])) == 0:
            points = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), float)
            if len(points) == 0:
                raise GeometryError(f"{path}: neither faces nor points")
            return surfaces.Points(points)
        return surfaces.sample(mesh, n, seed)
    a = read_array(path)
    if a.ndim != 2 or a.shape[1] not in (3, 6):
        raise GeometryError(f"{path}: points need shape (n, 3) or (n, 6), got {a.shape}")
    return surfaces.Points(a[:, :3].astype(float), a[:, 3:6].astype(float) if a.shape[1] == 6 else None)


@GEOMETRY_EVALUATORS.register("surfaces", inputs="meshes (.ply, .obj, .stl, .off, .glb) or points (.npy, .xyz)")
def evaluate_surfaces(pred: Path, truth: Path, tau: float = surfaces.TAU, aligned: bool = True,
                      samples: int = surfaces.SAMPLES, seed: int = 0, **_: Any) -> dict[str, Any]:
    """Accuracy, completeness, Chamfer-L1, precision/recall/F-score at ``tau``, normal consistency."""
    return surfaces.scores(read_points(pred, samples, seed + 1), read_points(truth, samples, seed), tau, aligned)
