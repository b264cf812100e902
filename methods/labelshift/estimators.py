"""Point estimates of the label-shift weights w_k = p_target(y=k) / p_source(y=k): BBSE and RLLS.

Under label shift the target distribution of predicted labels is mu = C w, with C[i, j] the source
joint probability of (predicted i, true j). BBSE (Lipton et al., 2018) inverts C; RLLS
(Azizzadenesheli et al., 2019) solves a norm-regularised least-squares problem around w = 1.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from .errors import SingularConfusionError


def check_conditioning(C: np.ndarray, max_cond: float = 1e6) -> float:
    """Condition number of C; raises ``SingularConfusionError`` when above ``max_cond``."""
    cond = float(np.linalg.cond(C)) if np.isfinite(C).all() else np.inf
    if not np.isfinite(cond) or cond > max_cond:
        never = np.flatnonzero(C.sum(axis=1) == 0)
        hint = f"; class indices never predicted on the source: {never.tolist()}" if len(never) else ""
        raise SingularConfusionError(f"confusion matrix is singular or ill-conditioned (condition number "
                                     f"{cond:.3g} > {max_cond:.3g}){hint}")
    return cond


def bbse(C: np.ndarray, mu: np.ndarray, max_cond: float = 1e6, clip: bool = True) -> np.ndarray:
    """Black-box shift estimate w = C^-1 mu (negative entries clipped to 0 when ``clip``)."""
    check_conditioning(C, max_cond)
    w = np.linalg.solve(C, mu)
    return np.maximum(w, 0.0) if clip else w


def rlls(C: np.ndarray, mu: np.ndarray, n: int, delta: float = 0.1, rho: float | None = None,
         alpha: float = 0.01, max_cond: float = 1e6) -> np.ndarray:
    """RLLS: w = 1 + theta, theta = argmin ||C theta - b||_2 + rho ||theta||_2 with b = mu - C 1.

    ``rho`` defaults to alpha * 3 Delta_C, Delta_C = 2 log(2K/delta) / (3n) + sqrt(2 log(2K/delta) / n)
    the deviation bound on ||C_hat - C||_2, with the RLLS authors' default alpha = 0.01 (alpha = 1,
    the bound itself, shrinks w far towards 1 at a few thousand samples). Solved exactly: theta = 0, the BBSE
    solution, or a ridge solution whose penalty lam satisfies lam ||theta|| = rho ||C theta - b||
    (root search on log lam); the constraint w >= 0 is applied by clipping.
    """
    check_conditioning(C, max_cond)
    K = len(mu)
    if rho is None:
        log_term = np.log(2 * K / delta)
        rho = alpha * 3 * (2 * log_term / (3 * n) + np.sqrt(2 * log_term / n))
    b = mu - C.sum(axis=1)
    if np.linalg.norm(C.T @ b) <= rho * np.linalg.norm(b):  # 0 is a subgradient point
        return np.ones(K)
    theta = np.linalg.solve(C, b)
    if rho * np.linalg.norm(np.linalg.solve(C.T, theta)) <= np.linalg.norm(theta):  # zero residual optimal
        return np.maximum(1 + theta, 0.0)
    G, Ctb = C.T @ C, C.T @ b

    def ridge(log_lam: float) -> np.ndarray:
        return np.linalg.solve(G + np.exp(log_lam) * np.eye(K), Ctb)

    def gap(log_lam: float) -> float:
        t = ridge(log_lam)
        return np.exp(log_lam) * np.linalg.norm(t) - rho * np.linalg.norm(C @ t - b)

    scale = np.log(np.linalg.norm(G, 2))
    log_lam = brentq(gap, scale - 30, scale + 30, xtol=1e-12)
    return np.maximum(1 + ridge(log_lam), 0.0)
