"""``saliency``: query-free, the frames least like the rest of the video.

A frame's saliency is its cosine distance to its k-th nearest other candidate in
feature space, the distance-based outlier score of Ramaswamy, Rastogi & Shim (2000,
"Efficient algorithms for mining outliers from large data sets"); the ``budget`` most
salient frames are chosen. Rare events (a collision, a bus passing an empty road) stand
out against long stretches of similar frames.
Pools over :data:`~._common.PAIRWISE_LIMIT` candidates are thinned evenly to that many first
(the N x N matrices would not fit otherwise).
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import pairwise, top


def knn_outlier_score(features: np.ndarray, k: int = 3) -> np.ndarray:
    """Cosine distance of each row to its k-th nearest other row."""
    x = np.asarray(features, np.float64)
    d = 1.0 - x @ x.T
    np.fill_diagonal(d, np.inf)
    k = min(k, len(x) - 1)
    return np.sort(d, axis=1)[:, k - 1]


@SELECTORS.register("saliency", needs=("features",))
@pairwise
def saliency(pool: Pool, budget: int, rng: np.random.Generator, k: int = 3) -> Selection:
    """The ``budget`` candidates with the largest k-nearest-neighbour distance."""
    if k < 1:
        raise ValueError(f"saliency selector: k must be >= 1, not {k}")
    score = knn_outlier_score(pool.features, k)
    chosen = top(score, budget)
    return Selection.of(chosen, score[chosen])
