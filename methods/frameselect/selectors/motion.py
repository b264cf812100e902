"""``motion`` and ``flow``: the candidates where the picture moves most.

- ``motion``: mean absolute grey-level difference to the previous candidate of the same
  video (inter-frame differencing, as in the pixel-difference measures of Zhang,
  Kankanhalli & Smoliar, 1993); a video's first candidate takes its difference to the next.
- ``flow``: mean optical-flow magnitude from the previous candidate, by Horn & Schunck
  (1981, "Determining optical flow"), on thumbnails downscaled to ``side`` pixels, with
  smoothness weight ``alpha`` and ``iterations`` Jacobi updates.

Both take the ``budget`` highest-scoring candidates.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from ..core import SELECTORS, Pool, Selection
from ._common import grey, same_video_pairs, top


def _per_candidate(pool: Pool, pair_scores: np.ndarray) -> np.ndarray:
    """Scores of (i-1, i) pairs (length N-1) to candidates: pair (i-1, i) scores i; a video's start takes its next."""
    same = same_video_pairs(pool)
    out = np.zeros(pool.n)
    out[1:] = np.where(same[1:], pair_scores, 0.0)
    first = np.flatnonzero(~same)
    nxt = first + 1
    ok = (nxt < pool.n) & np.isin(nxt, np.flatnonzero(same))
    out[first[ok]] = out[nxt[ok]]
    return out


def frame_difference(pool: Pool) -> np.ndarray:
    """Mean absolute grey difference of each candidate to its neighbour in the same video."""
    g = grey(pool)
    return _per_candidate(pool, np.abs(g[1:] - g[:-1]).mean(axis=(1, 2)))


HS_KERNEL = np.array([[1 / 12, 1 / 6, 1 / 12], [1 / 6, 0, 1 / 6], [1 / 12, 1 / 6, 1 / 12]])[None]


def horn_schunck(a: np.ndarray, b: np.ndarray, alpha: float = 0.1, iterations: int = 30) -> tuple[np.ndarray, ...]:
    """Flow (u, v) from images ``a`` to ``b`` (both (N, h, w) floats in [0, 1]), batched over the first axis."""
    kx = np.array([[-1, 1], [-1, 1]])[None] * 0.25
    ky = np.array([[-1, -1], [1, 1]])[None] * 0.25
    ix = ndimage.convolve(a, kx) + ndimage.convolve(b, kx)
    iy = ndimage.convolve(a, ky) + ndimage.convolve(b, ky)
    it = ndimage.convolve(b - a, np.full((1, 2, 2), 0.25))
    u, v = np.zeros_like(a), np.zeros_like(a)
    for _ in range(iterations):
        ub, vb = ndimage.convolve(u, HS_KERNEL), ndimage.convolve(v, HS_KERNEL)
        d = (ix * ub + iy * vb + it) / (alpha**2 + ix**2 + iy**2)
        u, v = ub - ix * d, vb - iy * d
    return u, v


def flow_magnitude(pool: Pool, side: int = 32, alpha: float = 0.1, iterations: int = 30) -> np.ndarray:
    """Mean Horn-Schunck flow magnitude of each candidate from its neighbour in the same video."""
    g = grey(pool)
    if g.shape[1] != side or g.shape[2] != side:
        g = ndimage.zoom(g, (1, side / g.shape[1], side / g.shape[2]), order=1)
    if pool.n < 2:
        return np.zeros(pool.n)
    u, v = horn_schunck(g[:-1], g[1:], alpha, iterations)
    return _per_candidate(pool, np.hypot(u, v).mean(axis=(1, 2)))


@SELECTORS.register("motion", needs=("pixels",))
def motion(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """The ``budget`` candidates with the largest frame difference."""
    score = frame_difference(pool)
    chosen = top(score, budget)
    return Selection.of(chosen, score[chosen])


@SELECTORS.register("flow", needs=("pixels",))
def flow(pool: Pool, budget: int, rng: np.random.Generator, side: int = 32, alpha: float = 0.1,
         iterations: int = 30) -> Selection:
    """The ``budget`` candidates with the largest Horn-Schunck optical-flow magnitude."""
    score = flow_magnitude(pool, side, alpha, iterations)
    chosen = top(score, budget)
    return Selection.of(chosen, score[chosen])
