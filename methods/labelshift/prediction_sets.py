"""Prediction sets for the target domain from labelled source calibration data.

``pac_threshold``: PAC prediction sets under label shift (Si et al., ICLR 2024). Rejection sampling
with the weight intervals turns source calibration examples into target examples: with b = max_k hi_k,
example i is kept when V_i <= w(y_i) / b. As w is only known up to [lo, hi], the worst case is taken:
examples the set misses are kept with w = hi (V_i <= hi / b), examples it covers with w = lo. The
threshold is the largest tau whose worst-case counts pass the binomial test
``Binom(e; e + c, epsilon).cdf <= delta``; since k*(N + 1) <= k*(N) + 1, passing in the worst case
implies passing for the true w, so P(target error > epsilon) <= delta + P(w outside the intervals).

``conformal_thresholds``: weighted split conformal prediction under label shift (Podkopaev and
Ramdas, 2021): calibration score weights w(y_i), test weight w(y) for each candidate label y.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom


def pac_threshold(scores: np.ndarray, labels: np.ndarray, lo: np.ndarray, hi: np.ndarray, epsilon: float,
                  delta: float, rng: np.random.Generator) -> float:
    """Largest tau such that {y : p(y|x) >= tau} has target error <= epsilon w.p. >= 1 - delta.

    ``scores[i]`` = p(y_i | x_i) on source calibration examples with class indices ``labels``;
    ``lo``/``hi`` are per-class weight intervals (lo = hi = w for known weights). Returns 0 (every
    label in every set) when no threshold passes, e.g. when some hi_k is infinite.
    """
    if not 0 < epsilon < 1 or not 0 < delta < 1:
        raise ValueError(f"epsilon and delta must be in (0, 1), got {epsilon}, {delta}")
    scores, labels = np.asarray(scores, float), np.asarray(labels)
    v = rng.uniform(size=len(scores))  # drawn before any check so results line up across methods
    b = float(np.max(hi))
    if not np.isfinite(b) or b <= 0:
        return 0.0
    keep_hi = v <= hi[labels] / b
    keep_lo = v <= np.maximum(lo[labels], 0.0) / b
    order = np.argsort(scores)
    s = scores[order]
    cum_hi = np.r_[0, np.cumsum(keep_hi[order])]
    cum_lo = np.r_[0, np.cumsum(keep_lo[order])]
    cand = np.unique(s)
    below = np.searchsorted(s, cand, side="left")  # examples with score < tau are errors
    errors = cum_hi[below]
    covered = cum_lo[-1] - cum_lo[below]
    ok = binom.cdf(errors, errors + covered, epsilon) <= delta
    return float(cand[ok].max()) if ok.any() else 0.0


def pac_sets(probs: np.ndarray, tau: float) -> np.ndarray:
    """Boolean (n, K) membership of {y : p(y|x) >= tau}."""
    return np.asarray(probs) >= tau


def conformal_thresholds(scores: np.ndarray, labels: np.ndarray, w: np.ndarray, alpha: float) -> np.ndarray:
    """Per-label thresholds q_y on the non-conformity 1 - p(y|x) for weighted conformal sets.

    q_y is the (1 - alpha) quantile of sum_i w(y_i) delta_{s_i} + w(y) delta_inf (normalised), so the
    set {y : 1 - p(y|x) <= q_y} covers the target label with probability >= 1 - alpha when w is exact.
    """
    s = 1.0 - np.asarray(scores, float)
    order = np.argsort(s)
    s, cw = s[order], np.cumsum(np.asarray(w, float)[np.asarray(labels)[order]])
    need = (1 - alpha) * (cw[-1] + np.asarray(w, float))
    j = np.searchsorted(cw, need, side="left")
    return np.where(j < len(s), s[np.minimum(j, len(s) - 1)], np.inf)


def conformal_sets(probs: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Boolean (n, K) membership of {y : 1 - p(y|x) <= q_y}."""
    return 1.0 - np.asarray(probs) <= q[None, :]
