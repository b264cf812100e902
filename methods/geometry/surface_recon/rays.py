"""A query view's rays and the context surfels each ray sees, in the query camera's frame.

Rays leave the query camera's centre through its pixels (any valid pixel of the query's pointmap). A ray's
context is, for every context view, the front-most surfels splatted within a ``window`` x ``window`` pixel block
around the ray's pixel (:attr:`..voting.Votes.lookup`). Lengths are divided by the query's median depth
(``scale``), so that a scene's unknown scale never reaches the networks. Each context surfel gives its depth along
the ray where the ray meets its tangent plane (``depths``; its projection on the ray when the plane is near
grazing), and the token features the ray regressor attends over (:data:`FEATURES`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .surfels import Cameras, Surfels
from .voting import Votes

FEATURES = ("depth_offset", "distance_to_ray", "facing", "confidence", "is_query", "agrees", "view_score",
            "pixel_offset")
RAY_FEATURES = ("confidence", "support", "view_count")
OFFSET_UNIT = 0.02  # depth offsets are read in units of 2% of the query's median depth
GRAZING = 0.25  # below this |cos| between normal and ray, a surfel's depth is its projection on the ray


@dataclass(frozen=True)
class RayContext:
    """Rays ``(R,)`` of one query view with ``T`` context surfels each: ``directions`` ``(R, 3)``, ``pixels``
    ``(R,)`` (flat), ``features`` ``(R, T, F)``, ``ray_features`` ``(R, G)``, ``depths`` ``(R, T)``, ``mask``
    ``(R, T)``, the surfels' ``positions`` and ``normals`` ``(R, T, 3)``, ``confidence`` and whether they won the
    query's vote (``agree``, ``(R, T)``; all False without voting), in the query frame divided by ``scale``, and
    the query's own depth ``own`` ``(R,)``."""

    query: int
    scale: float
    directions: np.ndarray
    pixels: np.ndarray
    features: np.ndarray
    ray_features: np.ndarray
    depths: np.ndarray
    mask: np.ndarray
    positions: np.ndarray
    normals: np.ndarray
    confidence: np.ndarray
    agree: np.ndarray
    own: np.ndarray


def plane_depths(positions: np.ndarray, normals: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Depth along each ray ``(R, 3)`` of its meeting with each surfel's tangent plane ``(R, T, 3)``; a surfel
    seen near grazing gives its projection on the ray instead."""
    facing = (normals * directions[:, None]).sum(-1)
    along = (positions * directions[:, None]).sum(-1)
    through = (normals * positions).sum(-1) / np.where(np.abs(facing) < GRAZING, 1.0, facing)
    return np.where(np.abs(facing) < GRAZING, along, through)


def gather(sf: Surfels, cameras: Cameras, votes: Votes, views: tuple[int, ...], window: int = 3,
           voting: bool = True, pixels: np.ndarray | None = None) -> RayContext:
    """The rays of ``votes.query`` (every valid pixel, or ``pixels``) with their context from ``views``;
    ``voting=False`` leaves the vote features (agreement, view score, support) at 0."""
    q, size = votes.query, cameras.size
    if pixels is None:
        pixels = np.flatnonzero(sf.valid[q].ravel())
    directions = cameras.rays(q).reshape(-1, 3)[pixels]
    own_xyz = cameras.to_camera(sf.xyz[q].reshape(-1, 3)[pixels], q)
    seen = sf.valid[q]
    scale = float(np.median(np.linalg.norm(cameras.to_camera(sf.xyz[q][seen], q), axis=-1))) if seen.any() else 1.0
    own = (own_xyz * directions).sum(-1) / scale
    half = window // 2
    offsets = [(dy, dx) for dy in range(-half, half + 1) for dx in range(-half, half + 1)]
    row, col = pixels // size, pixels % size
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("xyz", "normal", "conf", "radius", "query", "agree",
                                                            "score", "offset", "ok")}
    for v in views:
        xyz_v = sf.xyz[v].reshape(-1, 3)
        for dy, dx in offsets:
            r, c = row + dy, col + dx
            inside = (r >= 0) & (r < size) & (c >= 0) & (c < size)
            at = np.clip(r, 0, size - 1) * size + np.clip(c, 0, size - 1)
            j = np.where(inside, votes.lookup[v].ravel()[at], -1)
            ok = j >= 0
            j = np.maximum(j, 0)
            parts["xyz"].append(cameras.to_camera(xyz_v[j], q) / scale)
            parts["normal"].append(sf.normals[v].reshape(-1, 3)[j] @ cameras.rotation[q])
            parts["conf"].append(np.where(ok, sf.confidence[v].ravel()[j], 0.0))
            parts["radius"].append(sf.radius[v].ravel()[j] / scale)
            parts["query"].append(np.full(len(j), float(v == q)))
            parts["agree"].append(votes.agree[v].ravel()[at] & ok if voting else np.zeros(len(j), bool))
            parts["score"].append(np.full(len(j), votes.scores[v] if voting else 0.0))
            parts["offset"].append(np.full(len(j), float(np.hypot(dy, dx))))
            parts["ok"].append(ok)
    stack = {k: np.stack(v, axis=1) for k, v in parts.items()}
    mask = stack["ok"]
    depths = np.where(mask, plane_depths(stack["xyz"], stack["normal"], directions), own[:, None])
    along = (stack["xyz"] * directions[:, None]).sum(-1)
    perpendicular = np.linalg.norm(stack["xyz"] - along[..., None] * directions[:, None], axis=-1)
    features = np.stack([(depths - own[:, None]) / OFFSET_UNIT,
                         perpendicular / np.maximum(stack["radius"], 1e-9),
                         np.abs((stack["normal"] * directions[:, None]).sum(-1)), stack["conf"], stack["query"],
                         stack["agree"].astype(float), stack["score"], stack["offset"]], axis=-1)
    features = np.where(mask[..., None], np.clip(features, -10, 10), 0.0)
    support = votes.support.ravel()[pixels] if voting else np.zeros(len(pixels))
    ray_features = np.stack([sf.confidence[q].ravel()[pixels], support,
                             np.full(len(pixels), float(len(views)))], axis=-1)
    return RayContext(q, scale, directions, pixels, features.astype(np.float32), ray_features.astype(np.float32),
                      depths, mask, stack["xyz"], stack["normal"], stack["conf"], stack["agree"], own)


def concatenate(contexts: list[RayContext]) -> dict[str, np.ndarray]:
    """The regressor's arrays of several contexts (with equal token counts) stacked along the rays."""
    return {"features": np.concatenate([c.features for c in contexts]),
            "ray_features": np.concatenate([c.ray_features for c in contexts]),
            "depths": np.concatenate([c.depths for c in contexts]).astype(np.float32),
            "mask": np.concatenate([c.mask for c in contexts])}
