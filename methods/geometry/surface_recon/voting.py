"""Query-view-centric surfel voting: which views serve a query view as its reference views.

Each view is a query in turn. Every other view's surfels are splatted into the query's image
(:func:`..surfels.reproject`); at each query pixel, the query's own surfel casts a vote for each view whose
front-most surfel there lies on the query surfel's tangent plane (within ``tau`` x its depth) with a normal within
``max_angle`` of its own, weighted by both surfels' confidences. A view's score is the share of the query's
confidence it wins; the reference views are the ``k`` best-scoring other views holding at least ``min_share``.
Votes are sums over surfels, so the result does not depend on the order in which the views come.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .surfels import Cameras, Surfels, reproject


@dataclass(frozen=True)
class Votes:
    """One query view's votes: ``scores`` ``(V,)`` (the query's own: 1), the chosen ``references``, and per view
    and query pixel ``(V, H, W)`` the front-most surfel splatted there (``lookup``, -1: none) and whether it agrees
    with the query's (``agree``); ``support`` ``(H, W)``: the confidence-weighted agreeing views, the query's
    included."""

    query: int
    scores: np.ndarray
    references: tuple[int, ...]
    lookup: np.ndarray
    agree: np.ndarray
    support: np.ndarray


@dataclass(frozen=True)
class VotingConfig:
    """Agreement tolerances and how many reference views to keep."""

    k: int = 3
    tau: float = 0.02
    max_angle: float = 60.0
    min_share: float = 0.05


def vote(sf: Surfels, cameras: Cameras, query: int, config: VotingConfig = VotingConfig()) -> Votes:
    """The votes of ``query``'s surfels for every view."""
    views, size = sf.xyz.shape[0], cameras.size
    own = sf.valid[query]
    x_q, n_q, c_q = sf.xyz[query], sf.normals[query], sf.confidence[query]
    depth_q = cameras.to_camera(x_q, query)[..., 2]
    cos_max = np.cos(np.radians(config.max_angle))
    lookup = np.full((views, size, size), -1)
    agree = np.zeros((views, size, size), bool)
    weight = np.zeros((views, size, size))
    for v in range(views):
        lookup[v] = np.where(own, reproject(sf, cameras, v, query), -1)
        hit = lookup[v] >= 0
        j = np.maximum(lookup[v], 0).ravel()
        x_v = sf.xyz[v].reshape(-1, 3)[j].reshape(size, size, 3)
        n_v = sf.normals[v].reshape(-1, 3)[j].reshape(size, size, 3)
        c_v = sf.confidence[v].ravel()[j].reshape(size, size)
        on_plane = np.abs(((x_v - x_q) * n_q).sum(-1)) <= config.tau * depth_q
        agree[v] = hit & on_plane & ((n_v * n_q).sum(-1) >= cos_max)
        weight[v] = np.where(agree[v], c_v * c_q, 0.0)
    scores = (agree * c_q).sum(axis=(1, 2)) / max(float(c_q[own].sum()), 1e-12)
    scores[query] = 1.0
    others = [v for v in range(views) if v != query and scores[v] >= config.min_share]
    references = tuple(sorted(others, key=lambda v: -scores[v])[: config.k])
    support = np.where(own, weight.sum(axis=0) / np.maximum(c_q, 1e-12), 0.0)
    return Votes(query, scores, references, lookup, agree, support)


def vote_all(sf: Surfels, cameras: Cameras, config: VotingConfig = VotingConfig()) -> list[Votes]:
    """Every view's votes, each view the query in turn."""
    return [vote(sf, cameras, q, config) for q in range(sf.xyz.shape[0])]
