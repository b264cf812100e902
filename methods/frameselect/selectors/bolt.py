"""``bolt``: inverse transform sampling over query relevance (BOLT, Liu et al., CVPR 2025).

"BOLT: Boost Large VLMs Without Training for Long-form Video Understanding": relevance
scores (cosine similarity to the query, min-max normalised to [0, 1]) are sharpened to
``s ** alpha`` and normalised into a distribution over frames; frames are then drawn at
the ``budget`` evenly spaced quantiles ``(k + 0.5) / budget`` of its CDF (the first frame
whose CDF reaches the quantile), so dense frames go where relevance is high and some go
everywhere. ``alpha = 0`` is uniform sampling; large ``alpha`` approaches top-k. When two
quantiles land on one frame, the later one takes the nearest free frame in time, the
earlier on a tie (our rule; the paper leaves repeats unspecified).
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import minmax, relevance


def quantile_picks(scores: np.ndarray, budget: int, alpha: float = 3.0) -> np.ndarray:
    """Positions at the CDF quantiles of ``scores ** alpha`` (duplicates allowed)."""
    weights = np.power(np.clip(scores, 0.0, None), alpha)
    if weights.sum() <= 0:
        weights = np.ones_like(weights)
    cdf = np.cumsum(weights / weights.sum())
    quantiles = (np.arange(budget) + 0.5) / budget
    return np.minimum(np.searchsorted(cdf, quantiles - 1e-12, side="left"), len(scores) - 1)


@SELECTORS.register("bolt", needs=("features", "query_features"))
def bolt(pool: Pool, budget: int, rng: np.random.Generator, alpha: float = 3.0) -> Selection:
    """Inverse transform sampling of ``budget`` frames from the sharpened relevance distribution."""
    if alpha < 0:
        raise ValueError(f"bolt selector: alpha must be >= 0, not {alpha}")
    scores = minmax(relevance(pool))
    taken = np.zeros(pool.n, bool)
    chosen = []
    for i in quantile_picks(scores, budget, alpha):
        if taken[i]:
            free = np.flatnonzero(~taken)
            i = free[np.argmin(np.abs(free - i))]
        taken[i] = True
        chosen.append(int(i))
    return Selection.of(chosen, scores[chosen])
