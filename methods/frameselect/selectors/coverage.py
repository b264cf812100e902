"""``kcenter`` and ``facility_location``: frames that cover the feature space.

- ``kcenter``: greedy k-center (farthest-first traversal; Gonzalez, 1985, the core-set
  selection of Sener & Savarese, 2018): start from the candidate nearest the mean
  feature, then repeatedly add the candidate farthest (cosine distance) from those chosen.
  A 2-approximation of the smallest covering radius.
- ``facility_location``: greedy maximisation of the facility-location function
  F(S) = sum_i max_{j in S} sim(i, j) with sim = (1 + cos) / 2 in [0, 1] (monotone
  submodular, so greedy is within 1 - 1/e; Nemhauser, Wolsey & Fisher, 1978; used for
  video summarisation by Gygli, Grabner & Van Gool, 2015).

Scores: the distance at which a frame was added (kcenter), its marginal gain (facility location).
Pools over :data:`~._common.PAIRWISE_LIMIT` candidates are thinned evenly to that many first
(the N x N matrices would not fit otherwise).
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import pairwise


@SELECTORS.register("kcenter", needs=("features",))
def kcenter(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """Farthest-first traversal from the candidate nearest the mean feature."""
    x = np.asarray(pool.features, np.float64)
    first = int(np.argmax(x @ x.mean(axis=0)))
    chosen, scores = [first], [0.0]
    nearest = 1.0 - x @ x[first]
    for _ in range(budget - 1):
        nearest[chosen] = -np.inf
        j = int(np.argmax(nearest))
        chosen.append(j)
        scores.append(float(nearest[j]))
        nearest = np.minimum(nearest, 1.0 - x @ x[j])
    return Selection.of(chosen, scores)


def facility_value(sim: np.ndarray, chosen: list[int] | np.ndarray) -> float:
    """F(S) = sum over candidates of their best similarity to a chosen one."""
    return float(sim[:, list(chosen)].max(axis=1).sum()) if len(chosen) else 0.0


@SELECTORS.register("facility_location", needs=("features",))
@pairwise
def facility_location(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """Greedy facility location on (1 + cosine) / 2 similarities."""
    x = np.asarray(pool.features, np.float64)
    sim = (1.0 + x @ x.T) / 2.0
    cover = np.zeros(pool.n)
    chosen, gains = [], []
    for _ in range(budget):
        gain = np.maximum(sim - cover[:, None], 0.0).sum(axis=0)
        gain[chosen] = -np.inf
        j = int(np.argmax(gain))
        chosen.append(j)
        gains.append(float(gain[j]))
        cover = np.maximum(cover, sim[:, j])
    return Selection.of(chosen, gains)
