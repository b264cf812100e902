"""``dpp``: greedy MAP inference for a determinantal point process.

The fast greedy algorithm of Chen, Zhang & Zhou (2018, "Fast greedy MAP inference for
determinantal point process to improve recommendation diversity"), Algorithm 1: an
incremental Cholesky factor gives each candidate's marginal gain in
``log det L_S`` in O(N) per step. The kernel is ``L = diag(q) (S + eps I) diag(q)`` with
``S`` the cosine similarities of the features (PSD) and ``eps`` a small ridge so more
frames than feature dimensions stay selectable; with a query, quality is
``q = exp(theta * relevance)`` (the paper's relevance-diversity kernel; ``theta = 0`` is
pure diversity), without one ``q = 1``. Scores: each frame's marginal gain in log-det.
Pools over :data:`~._common.PAIRWISE_LIMIT` candidates are thinned evenly to that many first
(the N x N matrices would not fit otherwise).
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import pairwise, relevance


def kernel(pool: Pool, theta: float = 1.0, eps: float = 1e-3, rows: np.ndarray | None = None) -> np.ndarray:
    """The DPP kernel of the pool (or of candidates ``rows``)."""
    rows = np.arange(pool.n) if rows is None else rows
    x = np.asarray(pool.features, np.float64)[rows]
    q = np.exp(theta * relevance(pool)[rows]) if pool.query_features is not None else np.ones(len(rows))
    return q[:, None] * (x @ x.T + eps * np.eye(len(rows))) * q[None, :]


def greedy_map(L: np.ndarray, k: int) -> tuple[list[int], list[float]]:
    """Chen et al.'s greedy MAP: up to ``k`` items in order and the log-det gain of each."""
    n = len(L)
    c = np.zeros((k, n))
    d2 = np.diag(L).astype(np.float64).copy()
    chosen, gains = [], []
    for step in range(min(k, n)):
        d2m = np.where(np.isin(np.arange(n), chosen), -np.inf, d2)
        j = int(np.argmax(d2m))
        if d2m[j] <= 1e-12:
            break  # the rest lies in the span of the chosen: log-det cannot grow
        chosen.append(j)
        gains.append(float(np.log(d2m[j])))
        e = (L[j] - c[:step, j] @ c[:step]) / np.sqrt(d2m[j])
        c[step] = e
        d2 = d2 - e**2
    return chosen, gains


def log_det(L: np.ndarray, chosen: np.ndarray | list[int]) -> float:
    """log det of the kernel restricted to ``chosen`` (-inf when singular)."""
    sign, value = np.linalg.slogdet(L[np.ix_(chosen, chosen)])
    return float(value) if sign > 0 else -np.inf


@SELECTORS.register("dpp", needs=("features",))
@pairwise
def dpp(pool: Pool, budget: int, rng: np.random.Generator, theta: float = 1.0, eps: float = 1e-3) -> Selection:
    """Greedy MAP DPP over the pool (relevance-weighted when the pool has query features)."""
    if eps <= 0:
        raise ValueError(f"dpp selector: eps must be > 0 (keeps the kernel positive definite), not {eps}")
    chosen, gains = greedy_map(kernel(pool, theta, eps), budget)
    return Selection.of(chosen, gains)
