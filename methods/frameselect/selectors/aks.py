"""``aks``: Adaptive Keyframe Sampling's judge-and-split (Tang et al., CVPR 2025).

"Adaptive Keyframe Sampling for Long Video Understanding", following the authors' released
procedure: relevance scores (cosine similarity to the query) are min-max normalised over
the pool to [0, 1]. Starting from the whole pool at depth 0, every segment is *judged*
with the full budget ``n``: if the mean of its top-``n`` scores (all of them when it is
shorter) exceeds its mean score by more than ``threshold`` (the released ``t1``, 0.8),
relevance dominates and the segment is kept (TOP); otherwise it is *split* into two halves
at ``len // 2`` (BIN), until ``depth`` (the released ``all_depth``, 5). Each kept or
deepest segment at depth ``d`` then takes its top ``floor(n / 2**d)`` frames.

Deviation: the released code may return fewer than ``n`` frames (the floor, and segments
shorter than their share); here the frames still missing are the highest-scoring ones not
chosen, so every selector returns exactly the budget. The released variance test ``t2``
is off there (-100) and is left out.
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import minmax, relevance, top


def judge_and_split(scores: np.ndarray, budget: int, threshold: float = 0.8, depth: int = 5) -> list[int]:
    """AKS's recursion on normalised scores: positions chosen (at most ``budget``), leaf by leaf."""
    chosen: list[int] = []

    def visit(lo: int, hi: int, level: int) -> None:
        if hi <= lo:
            return
        s = scores[lo:hi]
        if level >= depth or s[top(s, budget)].mean() - s.mean() > threshold:
            chosen.extend((lo + top(s, budget // 2**level)).tolist())
            return
        mid = lo + (hi - lo) // 2
        visit(lo, mid, level + 1)
        visit(mid, hi, level + 1)

    visit(0, len(scores), 0)
    return chosen


@SELECTORS.register("aks", needs=("features", "query_features"))
def aks(pool: Pool, budget: int, rng: np.random.Generator, threshold: float = 0.8, depth: int = 5) -> Selection:
    """Judge-and-split over the pool's normalised query relevance."""
    scores = minmax(relevance(pool))
    chosen = judge_and_split(scores, budget, threshold, depth)
    if len(chosen) < budget:
        rest = np.setdiff1d(np.arange(pool.n), chosen)
        chosen += rest[top(scores[rest], budget - len(chosen))].tolist()
    return Selection.of(chosen, scores[chosen])
