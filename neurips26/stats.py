"""Small statistics shared by the task checks and the leaderboard (they must compute them the same way)."""

from __future__ import annotations

import numpy as np

Z95 = 1.959963984540054


def wilson(p: np.ndarray | float, n: np.ndarray | int, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of proportions ``p`` over ``n`` trials, within [0, 1]; (0, 1) where ``n`` is 0."""
    p = np.clip(np.asarray(p, float), 0.0, 1.0)
    n = np.asarray(n, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = 1 + z * z / n
        center = (p + z * z / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        low, high = np.clip(center - half, 0.0, 1.0), np.clip(center + half, 0.0, 1.0)
    empty = n <= 0
    return np.where(empty, 0.0, low), np.where(empty, 1.0, high)


def macro_f1_of_pairs(pairs: list[list[int]] | list[tuple[int, int]]) -> float:
    """Macro-averaged F1 over the gold classes present, from (gold, predicted) pairs: scikit-learn's
    ``f1_score(golds, preds, average="macro", labels=sorted(set(golds)), zero_division=0)`` (per class
    ``2 tp / (2 tp + fp + fn)``, never 0/0 for a class that is some document's gold), in numpy so that the
    leaderboard can bootstrap it."""
    if not len(pairs):
        return 0.0
    golds, preds = np.asarray(pairs, np.int64).T
    labels = np.unique(golds)
    hit = golds == preds
    tp = np.array([np.count_nonzero(hit & (golds == c)) for c in labels], float)
    gold_n = np.array([np.count_nonzero(golds == c) for c in labels], float)
    pred_n = np.array([np.count_nonzero(preds == c) for c in labels], float)
    return float(np.mean(2 * tp / (gold_n + pred_n)))
