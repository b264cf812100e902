"""``kts``: kernel temporal segmentation into ``budget`` segments, one frame from each.

Kernel Temporal Segmentation (Potapov, Douze, Harchaoui & Schmid, 2014, "Category-
specific video summarization") with the number of segments fixed to the budget: the
change points minimise the total within-segment scatter of the features under a linear
kernel, found exactly by dynamic programming; each segment contributes its middle
candidate. The pool is one sequence (videos end to end). Deviation: the paper also picks
the number of segments with a penalty; here the budget fixes it. Costs O(budget * N^2).
Pools over :data:`~._common.PAIRWISE_LIMIT` candidates are thinned evenly to that many first
(the N x N matrices would not fit otherwise).
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import pairwise


def scatter_costs(features: np.ndarray) -> np.ndarray:
    """C[a, b] = within-segment scatter of rows a..b-1 (linear kernel), for 0 <= a < b <= N; inf elsewhere."""
    x = np.asarray(features, np.float64)
    n = len(x)
    k = x @ x.T
    s = np.zeros((n + 1, n + 1))
    s[1:, 1:] = k.cumsum(0).cumsum(1)
    diag = np.concatenate([[0.0], np.cumsum(np.diag(k))])
    a, b = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    corner = np.diag(s)  # s[i, i]: the sum of the kernel over rows and columns 0..i-1
    with np.errstate(divide="ignore", invalid="ignore"):
        block = corner[None, :] - s - s.T + corner[:, None]  # kernel sum over a..b-1 x a..b-1
        cost = diag[b] - diag[a] - block / (b - a)
    return np.where(b > a, np.maximum(cost, 0.0), np.inf)


def segment(features: np.ndarray, m: int) -> list[int]:
    """The ``m - 1`` change points (segment starts after 0) minimising total scatter."""
    cost = scatter_costs(features)
    n = len(features)
    best = cost[0].copy()  # best[b]: one segment covering 0..b-1
    back = []
    for _ in range(m - 1):
        total = best[:, None] + cost  # end the previous segments at a, then one segment a..b-1
        back.append(np.argmin(total, axis=0))
        best = total[back[-1], np.arange(n + 1)]
    starts, end = [], n
    for arg in reversed(back):
        end = int(arg[end])
        starts.append(end)
    return sorted(starts)


@SELECTORS.register("kts", needs=("features",))
@pairwise
def kts(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """The middle candidate of each of the ``budget`` optimal kernel segments."""
    bounds = [0, *segment(pool.features, budget), pool.n]
    chosen = [(a + b - 1) // 2 for a, b in zip(bounds, bounds[1:], strict=False)]
    return Selection.of(chosen, [b - a for a, b in zip(bounds, bounds[1:], strict=False)])
