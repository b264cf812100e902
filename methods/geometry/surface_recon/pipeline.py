"""A scene (one real mesh seen by unposed views) and the surfaces each arm reconstructs from it.

A scene renders the canonical mesh (:mod:`.render`), asks the pointmap prior for pointmaps (:mod:`.prior`),
recovers the cameras and surfels from them alone (:mod:`.surfels`) and lets every view vote for its reference
views (:mod:`.voting`). The arms, all in the first view's frame:

* ``surface`` (the method): per query view, the ray regressor over the query's and its reference views'
  surfels with their votes, then raylet refinement with analytic normals (:mod:`.raylet`) on the surfels that
  won the query's vote;
* ``ray_regressor`` (the ablation trained at equal steps): the same regressor over every view's surfels, without
  votes or reference-view selection, its depth taken as is and its normals from the predicted pointmap;
* ``pointmap_only``: the prior's fused pointmaps with their normals (no training);
* ``convex_hull`` and ``sdf_mc``: the project's classical baselines (:mod:`..surfdata`) on the fused pointmaps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import trimesh

from .. import surfdata
from ..surfaces import Points, sample
from .prior import PointmapPrior, Pointmaps
from .ray_regressor import RayRegressor, predict
from .raylet import RayletConfig, refine
from .rays import RayContext, concatenate, gather
from .render import RenderedViews, canonical, render
from .surfels import Cameras, Surfels, pointmap_normals, recover_cameras, surfels
from .voting import Votes, VotingConfig, vote_all

METHOD, BASELINE, POINTMAP = "surface", "ray_regressor", "pointmap_only"
CLASSICAL = ("convex_hull", "sdf_mc")
TRAINED = (METHOD, BASELINE)
WINDOW, RAYLET_WINDOW = 3, 5


@dataclass(frozen=True)
class Scene:
    """One mesh seen by unposed views: the renders (truth inside), the prior's pointmaps, what is recovered from
    them, the votes, the truth's surface samples (canonical frame) and the prior's scale per canonical unit (for
    training targets only)."""

    name: str
    views: RenderedViews
    maps: Pointmaps
    cameras: Cameras
    surfels: Surfels
    votes: list[Votes]
    truth: Points
    prior_scale: float


def make_scene(mesh: trimesh.Trimesh, name: str, prior: PointmapPrior, views: int, size: int, seed: int,
               samples: int, voting: VotingConfig | None = None) -> Scene:
    """The scene of ``mesh`` (any frame: it is made canonical) from ``views`` random cameras seeded by ``seed``."""
    mesh = canonical(mesh)
    rendered = render(mesh, views, size, seed)
    maps = prior(rendered)
    cameras = recover_cameras(maps)
    sf = surfels(maps, cameras)
    ok = maps.valid & (rendered.depth > 0)
    k = rendered.intrinsics
    w, u = np.mgrid[0:size, 0:size]
    stretch = np.sqrt(((u + 0.5 - k[0, 2]) / k[0, 0]) ** 2 + ((w + 0.5 - k[1, 2]) / k[1, 1]) ** 2 + 1)
    ratio = np.linalg.norm(maps.local, axis=-1)[ok] / (rendered.depth * stretch[None])[ok]
    votes = vote_all(sf, cameras, voting or VotingConfig())
    return Scene(name, rendered, maps, cameras, sf, votes, sample(mesh, samples, seed),
                 float(np.median(ratio)) if ratio.size else 1.0)


def context_views(scene: Scene, query: int, arm: str) -> tuple[int, ...]:
    """The views whose surfels a query's rays see: the query and its references (method), or all views."""
    if arm == METHOD:
        return (query, *scene.votes[query].references)
    return (query, *(v for v in range(len(scene.votes)) if v != query))


def contexts(scene: Scene, arm: str, pixels: list[np.ndarray] | None = None,
             window: int = WINDOW) -> list[RayContext]:
    """Every query view's rays (or the given ``pixels`` per view) with their context for ``arm``."""
    return [gather(scene.surfels, scene.cameras, scene.votes[q], context_views(scene, q, arm), window,
                   voting=arm == METHOD, pixels=None if pixels is None else pixels[q])
            for q in range(len(scene.votes))]


def targets(scene: Scene, context: RayContext) -> np.ndarray:
    """True depths of a context's rays along their (recovered) directions, in its units (NaN: the ray misses)."""
    q, size = context.query, scene.cameras.size
    k = scene.views.intrinsics
    row, col = context.pixels // size, context.pixels % size
    stretch = np.sqrt(((col + 0.5 - k[0, 2]) / k[0, 0]) ** 2 + ((row + 0.5 - k[1, 2]) / k[1, 1]) ** 2 + 1)
    depth = scene.views.depth[q].ravel()[context.pixels]
    return np.where(depth > 0, depth * stretch * scene.prior_scale / context.scale, np.nan)


def arrays(contexts_: list[RayContext], tokens: int | None = None) -> dict[str, np.ndarray]:
    """The regressor's input arrays of several contexts, padded to ``tokens`` tokens per ray (default: the most)."""
    tokens = tokens or max(c.mask.shape[1] for c in contexts_)
    padded = []
    for c in contexts_:
        extra = tokens - c.mask.shape[1]
        if extra:
            pad = ((0, 0), (0, extra))
            c = RayContext(c.query, c.scale, c.directions, c.pixels, np.pad(c.features, (*pad, (0, 0))),
                           c.ray_features, np.pad(c.depths, pad), np.pad(c.mask, pad),
                           np.pad(c.positions, (*pad, (0, 0))), np.pad(c.normals, (*pad, (0, 0))),
                           np.pad(c.confidence, pad), np.pad(c.agree, pad), c.own)
        padded.append(c)
    return concatenate(padded)


def _to_world(scene: Scene, context: RayContext, depth: np.ndarray, normals: np.ndarray) -> Points:
    q = context.query
    points = scene.cameras.to_world(depth[:, None] * context.directions * context.scale, q)
    return Points(points, normals @ scene.cameras.rotation[q].T)


def _predicted_normals(scene: Scene, context: RayContext, depth: np.ndarray) -> np.ndarray:
    size = scene.cameras.size
    image = np.zeros((size * size, 3))
    image[context.pixels] = depth[:, None] * context.directions
    valid = np.zeros(size * size, bool)
    valid[context.pixels] = True
    normals = pointmap_normals(image.reshape(size, size, 3), valid.reshape(size, size), np.zeros(3))
    return normals.reshape(-1, 3)[context.pixels]


def reconstruct(scene: Scene, model: RayRegressor, arm: str, device: torch.device,
                raylet: RayletConfig | None = None) -> Points:
    """The surface points and normals ``arm`` (a trained one) reconstructs from ``scene``, in the world frame."""
    parts = []
    for context in contexts(scene, arm):
        depth = predict(model.to(device), arrays([context]), device).double().numpy()
        if arm == METHOD:
            near = gather(scene.surfels, scene.cameras, scene.votes[context.query],
                          context_views(scene, context.query, arm), RAYLET_WINDOW)
            voted = near.confidence * near.agree  # only surfels that won the query's vote shape the raylets
            depth, normals, _ = refine(context.directions, depth, near.positions, near.normals, voted,
                                       1.0 / float(scene.cameras.focal[context.query]), raylet or RayletConfig())
        else:
            normals = _predicted_normals(scene, context, depth)
        parts.append(_to_world(scene, context, depth, normals))
    return Points(np.vstack([p.xyz for p in parts]), np.vstack([p.normals for p in parts]))


def pointmap_only(scene: Scene) -> Points:
    """The prior's fused pointmaps (every point it gives) with their pointmap normals."""
    ok = scene.surfels.valid
    return Points(scene.maps.world[ok], scene.surfels.normals[ok])


def classical(scene: Scene, name: str, samples: int) -> Points:
    """A classical baseline's mesh (``convex_hull`` or ``sdf_mc``) on the fused pointmaps, sampled as scored."""
    ok = scene.surfels.valid
    points = scene.maps.world[ok]
    towards = np.broadcast_to(scene.cameras.centre[:, None, None], scene.maps.world.shape)[ok] - points
    towards /= np.maximum(np.linalg.norm(towards, axis=-1, keepdims=True), 1e-12)
    mesh = surfdata.BASELINES[name](surfdata.Observation(points, towards))
    return surfdata.prediction_points(mesh, samples)
