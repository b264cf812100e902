"""``aks``: Adaptive Keyframe Sampling's judge-and-split (Tang et al., CVPR 2025).

"Adaptive Keyframe Sampling for Long Video Understanding": relevance scores (here the
cosine similarity to the query, min-max normalised over the pool to [0, 1]) are
distributed over the video by recursion. A segment with budget ``m`` is *judged*: if
the mean of its top-``m`` scores exceeds the mean of all its scores by more than
``threshold``, relevance dominates and its top-``m`` frames are taken; otherwise it is
*split* into two halves, each with half the budget (the first half takes the odd one),
down to ``depth`` levels or a budget of one, where the segment takes its top frames. A segment no longer
than its budget takes all its frames, and any budget left over (from such short
segments) goes to the highest-scoring frames not chosen.
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import minmax, relevance, top


def judge_and_split(scores: np.ndarray, budget: int, threshold: float = 0.5, depth: int = 5) -> list[int]:
    """AKS's recursion on a score vector: positions chosen (at most ``budget``)."""
    chosen: list[int] = []

    def visit(lo: int, hi: int, m: int, level: int) -> None:
        if m <= 0 or hi <= lo:
            return
        s = scores[lo:hi]
        if hi - lo <= m:
            chosen.extend(range(lo, hi))
            return
        best = top(s, m)
        if level >= depth or m == 1 or s[best].mean() - s.mean() > threshold:
            chosen.extend((lo + best).tolist())
            return
        mid = (lo + hi) // 2
        visit(lo, mid, (m + 1) // 2, level + 1)
        visit(mid, hi, m // 2, level + 1)

    visit(0, len(scores), budget, 0)
    return chosen


@SELECTORS.register("aks", needs=("features", "query_features"))
def aks(pool: Pool, budget: int, rng: np.random.Generator, threshold: float = 0.5, depth: int = 5) -> Selection:
    """Judge-and-split over the pool's normalised query relevance."""
    scores = minmax(relevance(pool))
    chosen = judge_and_split(scores, budget, threshold, depth)
    if len(chosen) < budget:
        rest = np.setdiff1d(np.arange(pool.n), chosen)
        chosen += rest[top(scores[rest], budget - len(chosen))].tolist()
    return Selection.of(chosen, scores[chosen])
