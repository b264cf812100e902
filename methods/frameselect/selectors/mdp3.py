"""``mdp3``: segment-wise DPP with the budget split across segments by dynamic programming.

After MDP3 (Sun et al., 2025, "MDP3: A Training-free Approach for List-wise Frame
Selection in Video-LLMs"): the pool is cut into consecutive segments of ``segment``
candidates; within each, greedy MAP of a query-conditioned DPP (kernel of :mod:`.dpp`,
``q = exp(theta * relevance)``) gives the best log-det ``f_s(m)`` of its first ``m``
picks; a dynamic programme over segments then chooses the allocation ``m_s`` with
``sum m_s = budget`` maximising ``sum_s f_s(m_s)`` (segments independent given the
query: the paper's Markov decision process over segments, solved exactly). Deviations:
the paper's kernel is a learned-free RKHS kernel over VLM features; here it is the
cosine kernel of the pool's encoder, and ``f_s`` comes from the greedy prefix.
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from .dpp import greedy_map, kernel


def allocate(values: list[np.ndarray], budget: int) -> list[int]:
    """The m_s (0 <= m_s < len(values[s])) with sum m_s = budget maximising sum values[s][m_s]."""
    best = np.full(budget + 1, -np.inf)
    best[0] = 0.0
    choices = []
    for f in values:
        new = np.full(budget + 1, -np.inf)
        arg = np.zeros(budget + 1, np.int64)
        for b in range(budget + 1):
            for m in range(min(b, len(f) - 1) + 1):
                if best[b - m] + f[m] > new[b]:
                    new[b], arg[b] = best[b - m] + f[m], m
        best = new
        choices.append(arg)
    if not np.isfinite(best[budget]):
        raise ValueError(f"mdp3: segments cannot hold {budget} frames")
    out, b = [], budget
    for arg in reversed(choices):
        out.append(int(arg[b]))
        b -= out[-1]
    return out[::-1]


@SELECTORS.register("mdp3", needs=("features", "query_features"))
def mdp3(pool: Pool, budget: int, rng: np.random.Generator, segment: int = 32, theta: float = 1.0,
         eps: float = 1e-3) -> Selection:
    """Per-segment greedy DPP prefixes, allocated across segments by dynamic programming."""
    if segment < 1:
        raise ValueError(f"mdp3 selector: segment must be >= 1, not {segment}")
    parts = [np.arange(a, min(a + segment, pool.n)) for a in range(0, pool.n, segment)]
    orders, values = [], []
    for rows in parts:
        order, gains = greedy_map(kernel(pool, theta, eps, rows), min(budget, len(rows)))
        orders.append(rows[order])
        values.append(np.concatenate([[0.0], np.cumsum(gains)]))  # f_s(m) = log det of the first m picks
    counts = allocate(values, budget)
    chosen = np.concatenate([o[:m] for o, m in zip(orders, counts, strict=True)])
    gains = np.concatenate([np.diff(v)[:m] for v, m in zip(values, counts, strict=True)])
    return Selection.of(chosen, gains)
