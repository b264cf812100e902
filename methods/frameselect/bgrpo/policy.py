"""The selection policy: a linear score per candidate frame, a Plackett-Luce distribution over ordered picks.

Frame features (:func:`frame_features`, from the pool's encoder features ``f`` and query features
``q``, all zero where the pool has no query): ``f * q`` (which parts of the frame match the
query), ``f - mean of its video`` (what differs from the static background), the relevance
``f . q`` and a bias. The score is ``s = phi @ w``; ``budget`` frames are drawn without
replacement, each pick with probability ``softmax(s)`` over the frames left (Plackett-Luce, sampled
by the Gumbel-top-k trick). :func:`log_prob` gives ``log pi(S)`` of an ordered pick and its
gradient in ``w``.
"""

from __future__ import annotations

import numpy as np

from ..core import Pool


def frame_features(pool: Pool) -> np.ndarray:
    """(N, 2D + 2) policy features of the pool's candidates."""
    f = np.asarray(pool.features, np.float64)
    q = np.zeros(f.shape[1]) if pool.query_features is None else np.asarray(pool.query_features, np.float64)
    centred = f.copy()
    for v in np.unique(pool.video_index):
        rows = pool.video_index == v
        centred[rows] -= f[rows].mean(axis=0)
    return np.concatenate([f * q, centred, (f @ q)[:, None], np.ones((len(f), 1))], axis=1)


def softmax(s: np.ndarray) -> np.ndarray:
    z = np.exp(s - s.max())
    return z / z.sum()


def sample(scores: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """An ordered pick of ``k`` positions from Plackett-Luce(``scores``) (Gumbel-top-k)."""
    return np.argsort(-(scores + rng.gumbel(size=len(scores))), kind="stable")[:k]


def log_prob(phi: np.ndarray, w: np.ndarray, picks: np.ndarray) -> tuple[float, np.ndarray]:
    """``log pi_w(picks)`` under Plackett-Luce and its gradient in ``w``."""
    s = phi @ w
    left = np.ones(len(s), bool)
    total, grad = 0.0, np.zeros_like(w)
    for i in picks:
        p = np.where(left, softmax(np.where(left, s, -np.inf)), 0.0)
        total += float(s[i] - np.log(np.exp(s[left] - s[left].max()).sum()) - s[left].max())
        grad += phi[i] - p @ phi
        left[i] = False
    return total, grad
