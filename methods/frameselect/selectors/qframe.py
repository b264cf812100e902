"""``qframe``: query-aware sampling by the Gumbel-max trick (Q-Frame, Zhang et al., 2025).

"Q-Frame: Query-aware Frame Selection and Multi-Resolution Adaptation for Video-LLMs":
relevance (cosine similarity to the query) defines ``p = softmax(relevance / tau)``;
adding independent Gumbel(0, 1) noise to the logits and keeping the ``budget`` largest
draws ``budget`` frames without replacement from ``p`` (each successive pick is
proportional to ``p`` among the rest). Small ``tau`` approaches top-k, large ``tau``
uniform random. Deviation: Q-Frame's multi-resolution adaptation (fewer pixels for less
relevant frames) belongs to the answering side and is not done here. Scores: ``p``.
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import relevance, top


def softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max())
    return z / z.sum()


@SELECTORS.register("qframe", needs=("features", "query_features"))
def qframe(pool: Pool, budget: int, rng: np.random.Generator, tau: float = 0.05) -> Selection:
    """Gumbel-top-k sampling from softmax(relevance / tau)."""
    if tau <= 0:
        raise ValueError(f"qframe selector: tau must be > 0, not {tau}")
    logits = relevance(pool) / tau
    chosen = top(logits + rng.gumbel(size=pool.n), budget)
    return Selection.of(chosen, softmax(logits)[chosen])
