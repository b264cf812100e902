"""Query relevance rankings: ``topk``, ``segment_top1``, ``nms_topk``.

Relevance is the cosine similarity of a frame's features to the query's (CLIP-style
retrieval scoring, Radford et al., 2021).

- ``topk``: the ``budget`` most relevant frames (the top-k baseline of the query-aware
  selection papers, e.g. Q-Frame, AKS, BOLT).
- ``segment_top1``: the pool cut into ``budget`` equal segments, the most relevant frame
  of each (the "relevance within uniform bins" baseline that keeps coverage).
- ``nms_topk``: relevance smoothed over time with a Gaussian of ``sigma`` candidates
  (within each video), then greedy temporal non-maximum suppression: take the best,
  drop every candidate within ``radius`` seconds of it, repeat (as in temporal action
  detection; radius defaults to half the uniform spacing). If suppression leaves too few,
  the rest are the best of those suppressed.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter1d

from ..core import SELECTORS, Pool, Selection
from ._common import relevance, segments, temporal_nms, top

QUERY = ("features", "query_features")


@SELECTORS.register("topk", needs=QUERY)
def topk(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """The ``budget`` highest query similarities."""
    score = relevance(pool)
    chosen = top(score, budget)
    return Selection.of(chosen, score[chosen])


@SELECTORS.register("segment_top1", needs=QUERY)
def segment_top1(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """The most query-similar candidate in each of ``budget`` equal segments."""
    score = relevance(pool)
    chosen = [int(s[np.argmax(score[s])]) for s in segments(pool.n, budget)]
    return Selection.of(chosen, score[chosen])


def smoothed(pool: Pool, score: np.ndarray, sigma: float) -> np.ndarray:
    """``score`` convolved with a Gaussian of ``sigma`` candidates, separately in each video."""
    if sigma <= 0:
        return score.copy()
    out = np.empty_like(score)
    for v in np.unique(pool.video_index):
        mask = pool.video_index == v
        out[mask] = gaussian_filter1d(score[mask], sigma, mode="nearest")
    return out


@SELECTORS.register("nms_topk", needs=QUERY)
def nms_topk(pool: Pool, budget: int, rng: np.random.Generator, sigma: float = 1.0,
             radius: float | None = None) -> Selection:
    """Smoothed relevance, greedy temporal non-maximum suppression within ``radius`` seconds."""
    score = smoothed(pool, relevance(pool), sigma)
    return temporal_nms(pool, score, budget, radius)
