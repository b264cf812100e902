"""The pretrained pointmap prior: the interface a pointmap model plugs into, and the declared stand-in used here.

A pointmap model (DUSt3R-, MASt3R- or VGGT-like) maps unposed images to, per view, a point for every pixel in the
view's own camera frame (``local``), the same points in the first view's camera frame (``world``), and a
confidence. Anything with :class:`PointmapPrior`'s ``__call__`` fits; it must read only ``views.images``.

No pretrained pointmap network runs here, so :class:`RenderedDepthPrior` stands in for one, and says so: it reads
the renderer's hidden depth and poses and corrupts them the way such models err (:class:`PriorNoise`):
depth noise that grows at grazing angles, flying pixels at depth edges pushed backwards, a few gross outliers,
a small pose error per view (so the views' pointmaps disagree), and an unknown global scale. Its confidence is
lower at grazing angles and edges, jittered: it knows where it is likely wrong, not by how much.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from scipy import ndimage
from scipy.spatial.transform import Rotation

from .render import RenderedViews


@dataclass(frozen=True)
class Pointmaps:
    """Per-view pointmaps ``(V, H, W, 3)`` in each view's own frame (``local``) and in the first view's
    (``world``), and ``confidence`` ``(V, H, W)``: 0 where the model puts no point (background)."""

    local: np.ndarray
    world: np.ndarray
    confidence: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        """Pixels with a point ``(V, H, W)``."""
        return self.confidence > 0


@runtime_checkable
class PointmapPrior(Protocol):
    """A pointmap model: unposed views in, :class:`Pointmaps` out (reading ``views.images`` only)."""

    def __call__(self, views: RenderedViews) -> Pointmaps: ...


@dataclass(frozen=True)
class PriorNoise:
    """How the stand-in errs (relative to depth unless said otherwise)."""

    depth_sigma: float = 0.005  # Gaussian depth noise, x 1/cos(incidence), capped at 4x
    edge_push: float = 0.08  # flying pixels at depth edges move back by up to this share of their depth
    outlier_rate: float = 0.01  # share of pixels with a gross error
    outlier_size: float = 0.1
    rotation_deg: float = 0.3  # per-view pose error of views 2..V (rotation about a random axis)
    translation: float = 0.003  # per-view pose error, a share of the camera's distance


def pointmaps_from_depth(depth: np.ndarray, intrinsics: np.ndarray, poses: np.ndarray) -> Pointmaps:
    """Exact pointmaps of depth maps ``(V, H, W)`` (0: empty) seen with ``intrinsics`` from camera-to-world
    ``poses`` ``(V, 4, 4)``, the world being the first camera's frame; confidence 1 on every point."""
    size = depth.shape[-1]
    w, u = np.mgrid[0:size, 0:size]
    rays = np.stack([(u + 0.5 - intrinsics[0, 2]) / intrinsics[0, 0], (w + 0.5 - intrinsics[1, 2]) / intrinsics[1, 1],
                     np.ones((size, size))], -1)
    local = rays[None] * depth[..., None]
    to_first = np.linalg.inv(poses[0]) @ poses
    world = np.einsum("vij,vhwj->vhwi", to_first[:, :3, :3], local) + to_first[:, None, None, :3, 3]
    valid = depth > 0
    return Pointmaps(np.where(valid[..., None], local, 0.0), np.where(valid[..., None], world, 0.0),
                     valid.astype(float))


def depth_edges(depth: np.ndarray, jump: float = 0.03) -> np.ndarray:
    """Pixels ``(V, H, W)`` with a point next to an empty pixel or to a depth jump over ``jump`` x depth."""
    valid = depth > 0
    edges = np.zeros_like(valid)
    for v in range(len(depth)):
        near = ndimage.maximum_filter(np.where(valid[v], depth[v], 0), 3)
        far = -ndimage.maximum_filter(np.where(valid[v], -depth[v], -np.inf), 3)
        edges[v] = valid[v] & (~ndimage.binary_erosion(valid[v], border_value=0)
                               | (near - far > jump * depth[v]))
    return edges


class RenderedDepthPrior:
    """Stand-in pointmap model (declared): the renderer's depth and poses with :class:`PriorNoise`'s errors."""

    def __init__(self, noise: PriorNoise = PriorNoise(), seed: int = 0) -> None:
        self.noise = noise
        self.seed = seed

    def __call__(self, views: RenderedViews) -> Pointmaps:
        """Noisy pointmaps of ``views`` (seeded by the stand-in's seed and the views' size and count)."""
        nz = self.noise
        rng = np.random.default_rng([self.seed, len(views.depth), views.size])
        depth, valid = views.depth, views.depth > 0
        size = views.size
        w, u = np.mgrid[0:size, 0:size]
        k = views.intrinsics
        rays = np.stack([(u + 0.5 - k[0, 2]) / k[0, 0], (w + 0.5 - k[1, 2]) / k[1, 1], np.ones((size, size))], -1)
        rays /= np.linalg.norm(rays, axis=-1, keepdims=True)
        cosine = np.clip(np.abs((views.normals * rays[None]).sum(-1)), 0.25, 1.0)
        edges = depth_edges(depth)
        noisy = depth * (1 + nz.depth_sigma / cosine * rng.normal(size=depth.shape))
        noisy = np.where(edges, noisy * (1 + nz.edge_push * rng.uniform(size=depth.shape)), noisy)
        gross = rng.uniform(size=depth.shape) < nz.outlier_rate
        noisy = np.where(gross, noisy * (1 + nz.outlier_size * rng.uniform(-1, 1, depth.shape)), noisy)
        poses = views.poses.copy()
        for v in range(1, len(poses)):
            turn = Rotation.from_rotvec(np.radians(nz.rotation_deg) * _unit(rng.normal(size=3))).as_matrix()
            poses[v, :3, :3] = turn @ poses[v, :3, :3]
            poses[v, :3, 3] += nz.translation * np.linalg.norm(poses[v, :3, 3]) * _unit(rng.normal(size=3))
        maps = pointmaps_from_depth(np.where(valid, noisy, 0.0), k, poses)
        scale = float(np.exp(rng.uniform(np.log(0.5), np.log(2.0))))  # pointmaps are known up to scale
        confidence = cosine * np.where(edges, 0.3, 1.0) * np.exp(0.3 * rng.normal(size=depth.shape))
        return Pointmaps(scale * maps.local, scale * maps.world, np.where(valid, confidence, 0.0))


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x)
