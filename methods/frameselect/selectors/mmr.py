"""``mmr``: Maximal Marginal Relevance (Carbonell & Goldstein, 1998).

Greedily adds the frame maximising ``lam * sim(q, f) - (1 - lam) * max_{s chosen} sim(f, s)``
(cosine similarities; the first pick is the most relevant frame). ``lam = 1`` is top-k;
``lam = 0`` ignores the query and spreads over the feature space.
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import relevance


@SELECTORS.register("mmr", needs=("features", "query_features"))
def mmr(pool: Pool, budget: int, rng: np.random.Generator, lam: float = 0.5) -> Selection:
    """Greedy MMR with trade-off ``lam`` in [0, 1]."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"mmr selector: lam must be in [0, 1], not {lam}")
    x = np.asarray(pool.features, np.float64)
    rel = relevance(pool)
    redundancy = np.full(pool.n, -np.inf)  # max similarity to a chosen frame; none chosen yet
    chosen, scores = [], []
    for _ in range(budget):
        value = lam * rel - (1.0 - lam) * np.where(np.isfinite(redundancy), redundancy, 0.0)
        value[chosen] = -np.inf
        j = int(np.argmax(value))
        chosen.append(j)
        scores.append(float(value[j]))
        redundancy = np.maximum(redundancy, x @ x[j])
    return Selection.of(chosen, scores)
