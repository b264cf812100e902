"""Views of a real mesh from cameras the method never sees: an exact z-buffer rasteriser in NumPy.

The mesh is first brought to a canonical frame (bounding-box centre at the origin, unit diagonal). Each camera
sits at distance :data:`DISTANCE` from the origin in a random direction, looks at the origin with a random roll,
and shares one pinhole intrinsic matrix. Every triangle is tested against the pixel centres inside its screen
bounding box (barycentric coordinates; depth interpolated perspective-correctly as ``1/z``), and the nearest
triangle wins each pixel. A view gives a Lambertian shaded image (what a pointmap model reads), and, hidden from
the method, the true depth, the camera-frame normals and the camera poses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

DISTANCE = 1.6  # camera distance from the centre, in units of the mesh's bounding-box diagonal
HALF_FOV_TAN = 0.36  # tan of half the field of view: the unit-diagonal mesh fills most of the frame


@dataclass(frozen=True)
class RenderedViews:
    """``images`` ``(V, H, W)`` in [0, 1] (0: background) are the input; the rest is the renderer's truth.

    ``depth`` ``(V, H, W)`` is the z-depth (0 where the ray misses), ``normals`` ``(V, H, W, 3)`` the unit normals in
    each camera's frame (facing the camera), ``intrinsics`` ``(3, 3)`` and ``poses`` ``(V, 4, 4)`` camera-to-world
    in the canonical mesh frame."""

    images: np.ndarray
    depth: np.ndarray
    normals: np.ndarray
    intrinsics: np.ndarray
    poses: np.ndarray

    @property
    def size(self) -> int:
        """Pixels a side."""
        return int(self.images.shape[-1])


def canonical(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """A copy of ``mesh`` centred on its bounding box with a unit bounding-box diagonal."""
    out = mesh.copy()
    low, high = out.bounds
    out.apply_translation(-(low + high) / 2)
    out.apply_scale(1.0 / float(np.linalg.norm(high - low)))
    return out


def intrinsics(size: int) -> np.ndarray:
    """The shared pinhole matrix of a ``size`` x ``size`` view (principal point at the image centre)."""
    focal = size / (2 * HALF_FOV_TAN)
    return np.array([[focal, 0, size / 2], [0, focal, size / 2], [0, 0, 1.0]])


def look_at(direction: np.ndarray, roll: float = 0.0) -> np.ndarray:
    """The camera-to-world pose ``(4, 4)`` of a camera at :data:`DISTANCE` along ``direction`` looking at the
    origin, turned by ``roll`` radians about its axis."""
    direction = np.asarray(direction, float) / np.linalg.norm(direction)
    z = -direction
    helper = np.array([0.0, 0.0, 1.0]) if abs(z[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    x = np.cross(z, helper)
    x = Rotation.from_rotvec(z * roll).as_matrix() @ (x / np.linalg.norm(x))
    pose = np.eye(4)
    pose[:3, :3] = np.stack([x, np.cross(z, x), z], axis=1)  # columns: the camera's axes in the world
    pose[:3, 3] = DISTANCE * direction
    return pose


def cameras(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` camera-to-world poses ``(n, 4, 4)``: random directions around the origin, looking at it, random roll."""
    poses = []
    for _ in range(n):
        direction = rng.normal(size=3)
        poses.append(look_at(direction, rng.uniform(0, 2 * np.pi)))
    return np.stack(poses)


def rasterize(vertices: np.ndarray, faces: np.ndarray, k: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(depth ``(size, size)``, 0 where empty; face index ``(size, size)``, -1 where empty) of a mesh whose
    ``vertices`` are in the camera frame (z forward), both triangle windings drawn."""
    z = vertices[:, 2]
    uv = vertices[:, :2] / np.maximum(z, 1e-9)[:, None] * k[0, 0] + k[:2, 2]
    tri = uv[faces]
    keep = np.all(z[faces] > 1e-6, axis=1)
    lo = np.clip(np.ceil(tri.min(axis=1) - 0.5), 0, size).astype(np.int64)
    hi = np.clip(np.floor(tri.max(axis=1) - 0.5), -1, size - 1).astype(np.int64)
    width, height = hi[:, 0] - lo[:, 0] + 1, hi[:, 1] - lo[:, 1] + 1
    count = np.where(keep & (width > 0) & (height > 0), width * height, 0)
    face = np.repeat(np.arange(len(faces)), count)
    local = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    px = lo[face, 0] + local % width[face]
    py = lo[face, 1] + local // width[face]
    centre = np.stack([px + 0.5, py + 0.5], axis=1)
    a, b, c = tri[face, 0], tri[face, 1], tri[face, 2]
    area = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])

    def edge(p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return (q[:, 0] - p[:, 0]) * (centre[:, 1] - p[:, 1]) - (q[:, 1] - p[:, 1]) * (centre[:, 0] - p[:, 0])

    with np.errstate(divide="ignore", invalid="ignore"):
        bary = np.stack([edge(b, c), edge(c, a), edge(a, b)], axis=1) / area[:, None]
    inside = (np.abs(area) > 1e-12) & np.all(bary >= -1e-6, axis=1)
    inverse_z = (bary * (1.0 / z[faces[face]])).sum(axis=1)
    inside &= inverse_z > 0
    pixel = (py * size + px)[inside]
    depth_at, face_at = 1.0 / inverse_z[inside], face[inside]
    order = np.lexsort((depth_at, pixel))
    first = np.unique(pixel[order], return_index=True)[1]
    depth = np.zeros(size * size)
    index = np.full(size * size, -1)
    depth[pixel[order][first]] = depth_at[order][first]
    index[pixel[order][first]] = face_at[order][first]
    return depth.reshape(size, size), index.reshape(size, size)


def render(mesh: trimesh.Trimesh, views: int, size: int, seed: int = 0, poses: np.ndarray | None = None
           ) -> RenderedViews:
    """``views`` views of the canonical ``mesh`` (:func:`canonical`) from random cameras seeded by ``seed`` (or
    from the given camera-to-world ``poses`` ``(views, 4, 4)``)."""
    k = intrinsics(size)
    poses = cameras(views, np.random.default_rng(seed)) if poses is None else np.asarray(poses, float)
    face_normals = np.asarray(mesh.face_normals, float)
    depth = np.zeros((views, size, size))
    normals = np.zeros((views, size, size, 3))
    pixel = np.stack(np.meshgrid(np.arange(size) + 0.5, np.arange(size) + 0.5, indexing="xy"), -1)
    rays = np.concatenate([(pixel - k[:2, 2]) / k[0, 0], np.ones((size, size, 1))], -1)
    rays /= np.linalg.norm(rays, axis=-1, keepdims=True)
    for v in range(views):
        rotation, eye = poses[v, :3, :3], poses[v, :3, 3]
        cam = (np.asarray(mesh.vertices, float) - eye) @ rotation
        depth[v], face = rasterize(cam, np.asarray(mesh.faces), k, size)
        n = face_normals[np.maximum(face, 0)] @ rotation
        n *= -np.sign((n * rays).sum(-1, keepdims=True) + 1e-12)  # facing the camera
        normals[v] = np.where((face >= 0)[..., None], n, 0.0)
    shade = np.abs((normals * rays[None]).sum(-1))
    images = np.where(depth > 0, 0.15 + 0.85 * shade, 0.0)
    return RenderedViews(images.astype(np.float32), depth, normals, k, poses)
