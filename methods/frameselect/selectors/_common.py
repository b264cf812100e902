"""Helpers the selectors share: query relevance, equal segments of the timeline, grey thumbnails, thinning."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..core import Pool, Selection

PAIRWISE_LIMIT = 2000  # candidates a selector with an N x N matrix works on; larger pools are thinned evenly


def relevance(pool: Pool) -> np.ndarray:
    """Cosine similarity of each candidate's features to the query's (both L2-normalised)."""
    return np.asarray(pool.features, np.float64) @ np.asarray(pool.query_features, np.float64)


def minmax(x: np.ndarray) -> np.ndarray:
    """``x`` rescaled to [0, 1]; a constant vector becomes all ones."""
    span = x.max() - x.min()
    return (x - x.min()) / span if span > 0 else np.ones_like(x, dtype=np.float64)


def segments(n: int, k: int) -> list[np.ndarray]:
    """``k`` contiguous, near-equal runs of positions ``0..n-1`` (the first ones one longer when uneven)."""
    return [s for s in np.array_split(np.arange(n), k)]


def grey(pool: Pool) -> np.ndarray:
    """The pool's thumbnails as float32 grey images in [0, 1], shape (N, h, w)."""
    return np.asarray(pool.pixels).mean(axis=3, dtype=np.float32) / np.float32(255.0)


def same_video_pairs(pool: Pool) -> np.ndarray:
    """For each candidate i > 0, whether i - 1 is in the same video (the first candidate: False)."""
    same = np.zeros(pool.n, bool)
    same[1:] = pool.video_index[1:] == pool.video_index[:-1]
    return same


def top(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest scores (ties to the earlier position)."""
    return np.argsort(-scores, kind="stable")[:k]


def subpool(pool: Pool, rows: np.ndarray) -> Pool:
    """The candidates ``rows`` of ``pool`` as a pool of their own (same videos, query and duration)."""
    take = {name: getattr(pool, name)[rows] for name in ("times", "video_index", "features", "pixels")
            if getattr(pool, name) is not None}
    return replace(pool, **take)


def pairwise(fn: Callable[..., Selection]) -> Callable[..., Selection]:
    """For selectors whose memory is quadratic: above :data:`PAIRWISE_LIMIT` candidates, run on an even thinning."""

    @functools.wraps(fn)
    def run(pool: Pool, budget: int, rng: np.random.Generator, **options: object) -> Selection:
        if pool.n <= PAIRWISE_LIMIT or budget > PAIRWISE_LIMIT:
            return fn(pool, budget, rng, **options)
        rows = np.linspace(0, pool.n - 1, PAIRWISE_LIMIT).round().astype(np.int64)
        out = fn(subpool(pool, rows), budget, rng, **options)
        return Selection(rows[out.indices], out.scores)

    return run


def temporal_nms(pool: Pool, score: np.ndarray, budget: int, radius: float | None = None) -> Selection:
    """Greedy temporal non-maximum suppression: the best-scored frame, then the best at least ``radius`` seconds
    (default: half the even spacing) from every frame chosen; when the suppression leaves too few, the best of the
    rest."""
    timeline = pool.timeline
    radius = pool.duration / budget / 2 if radius is None else radius
    alive = np.ones(pool.n, bool)
    chosen: list[int] = []
    while len(chosen) < budget and alive.any():
        j = int(np.flatnonzero(alive)[np.argmax(score[alive])])
        chosen.append(j)
        alive &= np.abs(timeline - timeline[j]) >= radius
    if len(chosen) < budget:
        rest = np.setdiff1d(np.arange(pool.n), chosen)
        chosen += rest[top(score[rest], budget - len(chosen))].tolist()
    return Selection.of(chosen, score[chosen])
