"""Short-axis cine stacks rendered from the cardiac phantom (:mod:`..phantom`): generated images with exact truth.

Each phantom subject at each cine frame gives one *stack*: an image per short-axis slice (the slices of
:func:`phantom.slice_depths`, ``SLICE`` mm apart), its truth mask (pixel centre inside the exact endocardial
contour), the slice's exact cavity area and the stack's volume, ``Σ A_i h`` over the exact areas (the disc
summation a perfect contouring gives). An image shows the blood pool (bright, with partial volume at its edge),
the myocardium (dark), a right ventricle beside it (bright: the model must find the left one), a smooth
background, a bias field and noise; the ventricle's centre moves between subjects and a little between slices.

The label split is the semi-supervised setting of the paper: masks on the ED and ES stacks of a few training
subjects only, measured volumes (EDV, ESV: what a clinical report holds) for every training subject, and the
other frames unlabeled. Mask-supervised targets are contours traced from the masks (:func:`mask_contour`), fitted
with :func:`contours.fit` after fixing the start point and orientation (:func:`canonical`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from skimage import measure

from .. import contours, phantom

MAX_SLICES = 12  # the longest phantom ventricle (95 mm) has 12 slices of 8 mm


@dataclass(frozen=True)
class Grid:
    """The image grid: ``size`` pixels per side of ``pixel`` mm; coordinates are normalised by half the field."""

    size: int
    pixel: float

    @property
    def half(self) -> float:
        """Half the field of view (mm): the unit of normalised coordinates."""
        return self.size * self.pixel / 2

    def centres(self, supersample: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) in mm of the pixel centres (or of ``supersample``² sub-pixels per pixel), image-centred."""
        n = self.size * supersample
        ticks = (np.arange(n) - (n - 1) / 2) * self.pixel / supersample
        return np.meshgrid(ticks, ticks)  # x varies along columns, y along rows


def endo_radius(subject: phantom.Subject, z: float, frame: int, theta: np.ndarray) -> np.ndarray:
    """The endocardial radius (mm) at angles ``theta``: the phantom's contour is star-shaped about its centre."""
    return np.linalg.norm(subject.endo(z, frame, np.ravel(theta)), axis=1).reshape(np.shape(theta))


def render(subject: phantom.Subject, frame: int, grid: Grid, rng: np.random.Generator,
           centre: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Images ``(S, H, W)``, truth masks and exact areas (mm²) of the subject's slices at ``frame``."""
    depths = phantom.slice_depths(subject, frame)[:MAX_SLICES]
    xs, ys = grid.centres(2)
    px, py = grid.centres(1)
    shrink = subject.rho0[frame] / subject.rho0[0]
    rv_angle = np.pi + rng.normal(0, 0.3)
    images, masks = [], []
    for z in depths:
        c = centre + rng.normal(0, 1.0, 2)  # breath-hold misalignment between slices
        epi_r = np.linalg.norm(subject.epi(z, frame, np.zeros(1))[0])
        rv_c = c + (epi_r + 9 * shrink) * np.array([np.cos(rv_angle), np.sin(rv_angle)])
        rx, ry = xs - c[0], ys - c[1]
        r, theta = np.hypot(rx, ry), np.arctan2(ry, rx)
        cavity = r < endo_radius(subject, z, frame, theta)
        wall = (r < epi_r) & ~cavity
        u = (xs - rv_c[0]) * np.cos(rv_angle) + (ys - rv_c[1]) * np.sin(rv_angle)
        v = -(xs - rv_c[0]) * np.sin(rv_angle) + (ys - rv_c[1]) * np.cos(rv_angle)
        rv = ((u / (11 * shrink)) ** 2 + (v / (24 * shrink)) ** 2 < 1) & (r >= epi_r + 2)
        fine = np.where(cavity, 1.0, np.where(wall, 0.35, np.where(rv, 0.85, 0.2)))
        image = fine.reshape(grid.size, 2, grid.size, 2).mean(axis=(1, 3))  # partial volume at the edges
        gx, gy = grid.centres(1)
        bias = 1 + 0.15 * np.sin(gx / 30 + rng.uniform(0, 6)) * np.cos(gy / 35 + rng.uniform(0, 6))
        images.append(image * bias * rng.uniform(0.85, 1.15) + rng.normal(0, 0.06, image.shape))
        pr, pt = np.hypot(px - c[0], py - c[1]), np.arctan2(py - c[1], px - c[0])
        masks.append(pr < endo_radius(subject, z, frame, pt))
    areas = subject.endo_area(depths, frame)
    return np.asarray(images, np.float32), np.asarray(masks, bool), np.asarray(areas, float)


def canonical(points: np.ndarray) -> np.ndarray:
    """The closed contour counter-clockwise (positive shoelace area in x-y), starting where it crosses the ray at
    angle 0 from its centroid: the parameterisation every Fourier target and prediction shares."""
    p = np.asarray(points, float)
    x, y = p[:, 0], p[:, 1]
    if np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) < 0:
        p = p[::-1]
    rel = p - p.mean(axis=0)
    angle = np.arctan2(rel[:, 1], rel[:, 0])
    return np.roll(p, -int(np.argmin(np.where(rel[:, 0] > 0, np.abs(angle), np.inf))), axis=0)


def mask_contour(mask: np.ndarray, grid: Grid) -> np.ndarray | None:
    """The boundary (mm, x-y) of the mask's largest component, traced at the half level; None for < 3 pixels."""
    if mask.sum() < 3:
        return None
    traced = measure.find_contours(np.pad(mask.astype(float), 1), 0.5)
    rows_cols = max(traced, key=len) - 1
    xy = (rows_cols[:, ::-1] - (grid.size - 1) / 2) * grid.pixel
    return canonical(xy[:-1] if np.allclose(xy[0], xy[-1]) else xy)


def contour_target(mask: np.ndarray, grid: Grid, harmonics: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The mask's contour as normalised ``(centre (2,), coefficients (K, 4))``; None when the mask is empty."""
    points = mask_contour(mask, grid)
    if points is None:
        return None
    return contours.offset(points) / grid.half, contours.fit(points, harmonics) / grid.half


@dataclass
class Stacks:
    """Padded stacks ``(N, MAX_SLICES, ...)`` with their truth and which labels training may use."""

    images: torch.Tensor  # (N, S, H, W) float
    masks: torch.Tensor  # (N, S, H, W) bool: the truth (used in training only where has_mask)
    valid: torch.Tensor  # (N, S) bool: the slice exists
    depth: torch.Tensor  # (N, S) mm below the base (the slice position a scanner records)
    areas: torch.Tensor  # (N, S) exact areas, mm²
    volumes: torch.Tensor  # (N,) ml, disc summation of the exact areas
    subject: torch.Tensor  # (N,) subject id
    frame: torch.Tensor  # (N,) cine frame
    has_mask: torch.Tensor  # (N,) bool: masks may be used in training
    has_volume: torch.Tensor  # (N,) bool: the measured volume may be used in training
    centres: torch.Tensor  # (N, S, 2) target centre from the mask (normalised); where target_ok
    coefficients: torch.Tensor  # (N, S, K, 4) target coefficients from the mask (normalised); where target_ok
    target_ok: torch.Tensor  # (N, S) bool: a mask contour exists for this labelled slice

    def __len__(self) -> int:
        return int(self.images.shape[0])

    def take(self, index: torch.Tensor | np.ndarray) -> Stacks:
        """The stacks at ``index`` (all fields indexed alike)."""
        idx = torch.as_tensor(index, dtype=torch.long)
        return Stacks(**{k: v[idx] for k, v in vars(self).items()})

    def to(self, device: torch.device) -> Stacks:
        """The same stacks on ``device``."""
        return Stacks(**{k: v.to(device) for k, v in vars(self).items()})


def make_stacks(subject_ids: list[int], frames: list[int], grid: Grid, harmonics: int, *, seed: int,
                mask_subjects: frozenset[int] | set[int] = frozenset(), volume_frames: tuple[int, ...] = ()) -> Stacks:
    """Every (subject, frame) stack, rendered; ``mask_subjects`` have masks at ``volume_frames`` (ED, ES), every
    subject has its measured volume there, and the rest is unlabeled. Test stacks: pass no labels."""
    rows: list[dict] = []
    for sid in subject_ids:
        subject = phantom.make_subject(sid, seed)
        rng = np.random.default_rng([seed, sid, 7])
        centre = rng.uniform(-6, 6, 2)
        for frame in frames:
            images, masks, areas = render(subject, frame, grid, np.random.default_rng([seed, sid, frame]), centre)
            labelled = frame in volume_frames
            rows.append({"images": images, "masks": masks, "areas": areas, "subject": sid, "frame": frame,
                         "has_mask": labelled and sid in mask_subjects, "has_volume": labelled})
    n, s = len(rows), MAX_SLICES
    out = {"images": np.zeros((n, s, grid.size, grid.size), np.float32),
           "masks": np.zeros((n, s, grid.size, grid.size), bool), "valid": np.zeros((n, s), bool),
           "depth": np.zeros((n, s)),
           "areas": np.zeros((n, s)), "centres": np.zeros((n, s, 2)), "coefficients": np.zeros((n, s, harmonics, 4)),
           "target_ok": np.zeros((n, s), bool)}
    for i, row in enumerate(rows):
        k = len(row["areas"])
        out["images"][i, :k], out["masks"][i, :k], out["areas"][i, :k] = row["images"], row["masks"], row["areas"]
        out["valid"][i, :k] = True
        out["depth"][i, :k] = np.arange(k) * phantom.SLICE + phantom.SLICE / 2
        for j in range(k) if row["has_mask"] else ():
            target = contour_target(row["masks"][j], grid, harmonics)
            if target is not None:
                out["centres"][i, j], out["coefficients"][i, j] = target
                out["target_ok"][i, j] = True
    tensors = {key: torch.as_tensor(v, dtype=torch.float32 if v.dtype.kind == "f" else None)
               for key, v in out.items()}
    return Stacks(**tensors, volumes=(tensors["areas"].sum(1) * phantom.SLICE / 1000),
                  subject=torch.tensor([r["subject"] for r in rows]), frame=torch.tensor([r["frame"] for r in rows]),
                  has_mask=torch.tensor([r["has_mask"] for r in rows]),
                  has_volume=torch.tensor([r["has_volume"] for r in rows]))
