"""Surfels from pointmaps, and the cameras recovered from the pointmaps alone (the views are unposed).

* Cameras: each view's focal length by least squares on its local pointmap (``u - c = f x / z``, principal point
  at the image centre), its camera-to-world pose by Procrustes from its local to its world pointmap (as DUSt3R
  recovers poses).
* Surfels: every valid pixel's world point, its normal (cross product of the pointmap's central differences,
  facing its camera), its radius (the pixel's footprint, depth / focal) and its confidence.
* :func:`reproject`: one view's surfels in another view's image: per pixel the front-most surfel splatted onto it
  (each surfel covers the 2 x 2 pixels around its projection), as an index into the view's pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..surfaces import umeyama
from .prior import Pointmaps


@dataclass(frozen=True)
class Cameras:
    """Recovered cameras: ``focal`` ``(V,)`` in pixels, ``rotation`` ``(V, 3, 3)`` and ``centre`` ``(V, 3)``
    (camera-to-world), ``size`` pixels a side."""

    focal: np.ndarray
    rotation: np.ndarray
    centre: np.ndarray
    size: int

    def to_camera(self, points: np.ndarray, view: int) -> np.ndarray:
        """World ``points`` (..., 3) in camera ``view``'s frame."""
        return (points - self.centre[view]) @ self.rotation[view]

    def to_world(self, points: np.ndarray, view: int) -> np.ndarray:
        """Camera ``view``'s ``points`` (..., 3) in the world frame."""
        return points @ self.rotation[view].T + self.centre[view]

    def rays(self, view: int) -> np.ndarray:
        """Unit ray directions ``(H, W, 3)`` through the pixel centres of ``view``, in its frame."""
        s = self.size
        w, u = np.mgrid[0:s, 0:s]
        rays = np.stack([(u + 0.5 - s / 2) / self.focal[view], (w + 0.5 - s / 2) / self.focal[view],
                         np.ones((s, s))], -1)
        return rays / np.linalg.norm(rays, axis=-1, keepdims=True)


@dataclass(frozen=True)
class Surfels:
    """Per-pixel surfels ``(V, H, W, ...)``: world ``xyz``, unit ``normals``, ``radius``, ``confidence``
    (0: none)."""

    xyz: np.ndarray
    normals: np.ndarray
    radius: np.ndarray
    confidence: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        """Pixels holding a surfel ``(V, H, W)``."""
        return self.confidence > 0

    def permuted(self, order: np.ndarray) -> Surfels:
        """The same surfels with the views in ``order``."""
        return Surfels(self.xyz[order], self.normals[order], self.radius[order], self.confidence[order])


def recover_cameras(maps: Pointmaps) -> Cameras:
    """Focal lengths and camera-to-world poses of every view, from its local and world pointmaps."""
    views, size = maps.local.shape[0], maps.local.shape[1]
    w, u = np.mgrid[0:size, 0:size]
    offsets = np.stack([u + 0.5 - size / 2, w + 0.5 - size / 2], -1)
    focal, rotation, centre = np.zeros(views), np.zeros((views, 3, 3)), np.zeros((views, 3))
    for v in range(views):
        ok = maps.valid[v] & (maps.local[v, ..., 2] > 0)
        if ok.sum() < 3:
            focal[v], rotation[v] = size, np.eye(3)
            continue
        ratio = maps.local[v][ok][:, :2] / maps.local[v][ok][:, 2:]
        focal[v] = float((offsets[ok] * ratio).sum() / max((ratio ** 2).sum(), 1e-12))
        _, rotation[v], centre[v] = umeyama(maps.local[v][ok], maps.world[v][ok], scaling=False)
    return Cameras(focal, rotation, centre, size)


def pointmap_normals(points: np.ndarray, valid: np.ndarray, towards: np.ndarray) -> np.ndarray:
    """Unit normals ``(H, W, 3)`` of one pointmap from central differences (one-sided at its borders), facing
    ``towards`` (a point, e.g. the camera centre); 0 where no neighbour pair exists."""
    def difference(axis: int) -> tuple[np.ndarray, np.ndarray]:
        ahead, behind = np.roll(points, -1, axis), np.roll(points, 1, axis)
        ok_a, ok_b = np.roll(valid, -1, axis), np.roll(valid, 1, axis)
        edge = np.zeros_like(valid)
        index = [slice(None)] * 2
        index[axis] = slice(-1, None)
        edge[tuple(index)] = True
        ok_a &= ~edge
        edge = np.zeros_like(valid)
        index[axis] = slice(0, 1)
        edge[tuple(index)] = True
        ok_b &= ~edge
        d = np.where((ok_a & ok_b)[..., None], ahead - behind,
                     np.where(ok_a[..., None], ahead - points, np.where(ok_b[..., None], points - behind, 0.0)))
        return d, (ok_a | ok_b) & valid

    du, ok_u = difference(1)
    dw, ok_w = difference(0)
    n = np.cross(du, dw)
    length = np.linalg.norm(n, axis=-1, keepdims=True)
    n = np.where((ok_u & ok_w)[..., None] & (length > 1e-12), n / np.maximum(length, 1e-12), 0.0)
    return n * np.where(((towards - points) * n).sum(-1, keepdims=True) < 0, -1.0, 1.0)


def surfels(maps: Pointmaps, cameras: Cameras) -> Surfels:
    """Every valid pixel's surfel, in the world frame."""
    normals = np.stack([pointmap_normals(maps.world[v], maps.valid[v], cameras.centre[v])
                        for v in range(len(maps.world))])
    depth = np.linalg.norm(maps.local, axis=-1)
    confidence = np.where(np.linalg.norm(normals, axis=-1) > 0, maps.confidence, 0.0)
    return Surfels(maps.world, normals, depth / cameras.focal[:, None, None], confidence)


def project(points: np.ndarray, focal: float, size: int) -> np.ndarray:
    """Pixel coordinates ``(..., 2)`` of camera-frame ``points`` (principal point at the centre)."""
    return points[..., :2] / np.maximum(points[..., 2:], 1e-9) * focal + size / 2


def reproject(sf: Surfels, cameras: Cameras, source: int, target: int) -> np.ndarray:
    """For each pixel of view ``target`` ``(H, W)``, the flat pixel index of the front-most surfel of view
    ``source`` splatted onto it (-1: none). A view onto itself is the identity on its valid pixels."""
    size = cameras.size
    flat = np.arange(size * size)
    if source == target:
        return np.where(sf.valid[source].ravel(), flat, -1).reshape(size, size)
    keep = sf.valid[source].ravel()
    cam = cameras.to_camera(sf.xyz[source].reshape(-1, 3)[keep], target)
    index = flat[keep][cam[:, 2] > 1e-9]
    cam = cam[cam[:, 2] > 1e-9]
    uv = project(cam, cameras.focal[target], size) - 0.5
    base = np.floor(uv).astype(np.int64)
    pixels, depths, owners = [], [], []
    for du, dw in ((0, 0), (1, 0), (0, 1), (1, 1)):
        x, y = base[:, 0] + du, base[:, 1] + dw
        ok = (x >= 0) & (x < size) & (y >= 0) & (y < size)
        pixels.append(y[ok] * size + x[ok])
        depths.append(cam[ok, 2])
        owners.append(index[ok])
    pixel, depth, owner = np.concatenate(pixels), np.concatenate(depths), np.concatenate(owners)
    order = np.lexsort((owner, depth, pixel))
    first = np.unique(pixel[order], return_index=True)[1]
    out = np.full(size * size, -1)
    out[pixel[order][first]] = owner[order][first]
    return out.reshape(size, size)
