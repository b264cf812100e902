"""Inputs made from the real meshes for unposed surface reconstruction, and two baselines.

Every input lies in an unknown frame: the mesh is moved by a random similarity (rotation, scale 0.5-2, shift)
that the method never sees, hence the Sim(3) alignment before scoring. Two kinds:

* ``partial``: points sampled on the surface that face one of two random viewpoints (the back is missing), with
  Gaussian noise of 0.5% of the diagonal;
* ``depth``: three 64x64 depth maps from random viewpoints (a z-buffer of dense surface samples), each with its
  pinhole intrinsics and its pose relative to the first camera; back-projected and fused in the first camera's
  frame (:func:`depth_points`), they give the points, with each point's direction to its camera.

Baselines (mesh out): the convex hull of the points (``convex_hull``), and marching cubes on a signed distance
fitted to the points (``sdf_mc``: normals by local PCA, oriented toward the cameras or away from the centroid, the
signed distance to the nearest points' tangent planes on a 48³ grid, scikit-image's marching cubes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation
from skimage.measure import marching_cubes

from .surfaces import Points, sample

KINDS = ("partial", "depth")
DEPTH_SIZE = 64


@dataclass(frozen=True)
class Observation:
    """What a method gets: points in an unknown frame and, for depth input, each point's direction to its camera."""

    points: np.ndarray
    towards_camera: np.ndarray | None


def _random_similarity(rng: np.random.Generator) -> tuple[float, np.ndarray, np.ndarray]:
    return float(np.exp(rng.uniform(np.log(0.5), np.log(2)))), Rotation.random(random_state=rng).as_matrix(), \
        rng.normal(size=3)


def _viewpoint(rng: np.random.Generator, centre: np.ndarray, distance: float) -> np.ndarray:
    direction = rng.normal(size=3)
    return centre + distance * direction / np.linalg.norm(direction)


def partial(mesh: trimesh.Trimesh, seed: int = 0, n: int = 8000) -> Observation:
    """Noisy points facing two random viewpoints, in an unknown similarity frame."""
    rng = np.random.default_rng(seed)
    dense = sample(mesh, 3 * n, seed)
    diag = float(np.linalg.norm(mesh.extents))
    views = [_viewpoint(rng, mesh.centroid, 2 * diag) for _ in range(2)]
    facing = np.zeros(len(dense.xyz), bool)
    for view in views:
        facing |= ((view - dense.xyz) * dense.normals).sum(axis=1) > 0
    xyz = dense.xyz[facing][:n]
    xyz = xyz + rng.normal(scale=0.005 * diag, size=xyz.shape)
    s, r, t = _random_similarity(rng)
    return Observation(s * xyz @ r.T + t, None)


def _look_at(eye: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """World-to-camera rotation whose z axis looks from ``eye`` to ``centre``."""
    z = (centre - eye) / np.linalg.norm(centre - eye)
    x = np.cross(z, [0.0, 0.0, 1.0] if abs(z[2]) < 0.9 else [1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z])


def depth_maps(mesh: trimesh.Trimesh, seed: int = 0, views: int = 3,
               size: int = DEPTH_SIZE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(depths ``(views, size, size)``, 0 where empty; intrinsics ``(3, 3)``; camera-to-first-camera poses
    ``(views, 4, 4)``) of ``mesh`` from random viewpoints."""
    rng = np.random.default_rng(seed)
    dense = sample(mesh, 60_000, seed + 1).xyz
    diag = float(np.linalg.norm(mesh.extents))
    focal = size / (2 * np.tan(np.radians(20)))
    k = np.array([[focal, 0, size / 2], [0, focal, size / 2], [0, 0, 1]])
    depths, world_to_cam = np.zeros((views, size, size)), []
    for v in range(views):
        eye = _viewpoint(rng, mesh.centroid, 2.5 * diag)
        rotation = _look_at(eye, mesh.centroid)
        cam = (dense - eye) @ rotation.T
        uv = cam @ k.T
        u, w = (uv[:, 0] / uv[:, 2]).astype(int), (uv[:, 1] / uv[:, 2]).astype(int)
        ok = (u >= 0) & (u < size) & (w >= 0) & (w < size) & (cam[:, 2] > 0)
        z = np.full(size * size, np.inf)
        np.minimum.at(z, w[ok] * size + u[ok], cam[ok, 2])
        depths[v] = np.where(np.isfinite(z), z, 0).reshape(size, size)
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, -rotation @ eye
        world_to_cam.append(pose)
    first = world_to_cam[0]
    relative = np.stack([first @ np.linalg.inv(p) for p in world_to_cam])
    return depths, k, relative


def depth_points(depths: np.ndarray, intrinsics: np.ndarray, poses: np.ndarray) -> Observation:
    """Back-project and fuse depth maps in the first camera's frame, with each point's direction to its camera."""
    size = depths.shape[-1]
    w, u = np.mgrid[0:size, 0:size]
    rays = np.stack([u + 0.5, w + 0.5, np.ones_like(u, float)], -1) @ np.linalg.inv(intrinsics).T
    points, towards = [], []
    for depth, pose in zip(depths, poses, strict=True):
        hit = depth > 0
        cam = rays[hit] * depth[hit, None]
        world = cam @ pose[:3, :3].T + pose[:3, 3]
        points.append(world)
        towards.append(pose[:3, 3] - world)
    towards_cam = np.vstack(towards)
    return Observation(np.vstack(points), towards_cam / np.linalg.norm(towards_cam, axis=1, keepdims=True))


def depth(mesh: trimesh.Trimesh, seed: int = 0) -> Observation:
    """Fused depth-map points; the first camera's frame is unknown to the method (a random similarity of it)."""
    fused = depth_points(*depth_maps(mesh, seed))
    s, r, t = _random_similarity(np.random.default_rng([seed, 1]))
    return Observation(s * fused.points @ r.T + t, fused.towards_camera @ r.T)


def observe(mesh: trimesh.Trimesh, kind: str, seed: int = 0) -> Observation:
    """The input of ``kind`` (``partial`` or ``depth``) made from ``mesh``."""
    return {"partial": partial, "depth": depth}[kind](mesh, seed)


def convex_hull(observation: Observation) -> trimesh.Trimesh:
    """The convex hull of the points."""
    return trimesh.convex.convex_hull(observation.points)


def sdf_mc(observation: Observation, resolution: int = 48, neighbours: int = 12) -> trimesh.Trimesh:
    """Marching cubes on the signed distance to the points' local tangent planes (oriented PCA normals)."""
    x = observation.points
    tree = cKDTree(x)
    _, index = tree.query(x, neighbours)
    local = x[index] - x[index].mean(axis=1, keepdims=True)
    _, _, vt = np.linalg.svd(local, full_matrices=False)
    normals = vt[:, -1, :]
    outward = observation.towards_camera if observation.towards_camera is not None else x - x.mean(axis=0)
    normals *= np.sign((normals * outward).sum(axis=1, keepdims=True) + 1e-12)
    low, high = x.min(axis=0), x.max(axis=0)
    step = float((high - low).max()) / (resolution - 1)
    low = low - 2 * step
    shape = np.ceil((high - low) / step).astype(int) + 3
    grid = np.stack(np.meshgrid(*[low[i] + step * np.arange(shape[i]) for i in range(3)], indexing="ij"), -1)
    flat = grid.reshape(-1, 3)
    distance, nearest = tree.query(flat, 4)
    signed = ((flat[:, None, :] - x[nearest]) * normals[nearest]).sum(-1).mean(axis=1)
    volume = signed.reshape(shape)
    mask = (distance[:, 0] < 3 * step).reshape(shape)
    vertices, faces, _, _ = marching_cubes(volume, 0.0, spacing=(step,) * 3, mask=mask)
    return trimesh.Trimesh(vertices + low, faces, process=True)


BASELINES = {"convex_hull": convex_hull, "sdf_mc": sdf_mc}


def prediction_points(mesh: trimesh.Trimesh, n: int, seed: int = 0) -> Points:
    """A reconstructed mesh as scored: ``n`` area-uniform samples with normals."""
    return sample(mesh, n, seed)
