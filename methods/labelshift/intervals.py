"""Finite-sample confidence intervals for the label-shift weights.

1. ``confidence_boxes``: Clopper-Pearson intervals on every entry of the source joint confusion
   matrix C, the target predicted-label marginal mu and (optionally) the source label marginal p,
   with a union bound, so that all true values lie in their boxes with probability >= 1 - delta.
2. ``gaussian_elimination`` (baseline, Si et al., ICLR 2024): interval Gaussian elimination on the
   interval system [C | mu], giving an outer enclosure of every w with C w = mu for C, mu in the boxes.
3. ``lp_region`` (ours): the same constraints kept jointly as a polyhedron in (w, mu, q) with
   q_ij = C_ij w_j, and each [min w_k, max w_k] read off by linear programming (HiGHS). q projects
   out exactly unless column constraints are added, leaving an LP in (w, mu) with 2K variables.

Because w >= 0, L_ij <= C_ij <= U_ij is exactly L_ij w_j <= q_ij <= U_ij w_j, so the region contains
every w that the boxes allow and nothing the boxes rule out: its intervals lie inside the
Gaussian-elimination ones and keep the same 1 - delta simultaneous coverage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from scipy.stats import beta

from .data import Counts
from .errors import EmptyRegionError


@dataclass(frozen=True)
class Boxes:
    """Simultaneous (1 - delta) boxes: C in [C_lo, C_hi], mu in [mu_lo, mu_hi], p in [p_lo, p_hi]."""

    C_lo: np.ndarray
    C_hi: np.ndarray
    mu_lo: np.ndarray
    mu_hi: np.ndarray
    p_lo: np.ndarray | None
    p_hi: np.ndarray | None
    delta: float

    @property
    def K(self) -> int:
        return len(self.mu_lo)

    def contains(self, C: np.ndarray, mu: np.ndarray, p: np.ndarray | None = None) -> bool:
        ok = (self.C_lo <= C).all() and (self.C_hi >= C).all() and (self.mu_lo <= mu).all() and (mu <= self.mu_hi).all()
        if self.p_lo is not None and p is not None:
            ok = ok and (self.p_lo <= p).all() and (p <= self.p_hi).all()
        return bool(ok)


@dataclass(frozen=True)
class WeightIntervals:
    """Per-class intervals [lo_k, hi_k] for w_k (hi may be inf when the data cannot bound it)."""

    lo: np.ndarray
    hi: np.ndarray
    method: str
    seconds: float

    @property
    def width(self) -> np.ndarray:
        return self.hi - self.lo

    def contains(self, w: np.ndarray) -> np.ndarray:
        return (self.lo <= w) & (w <= self.hi)


def clopper_pearson(k: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided (1 - alpha) binomial intervals for k successes out of n."""
    k = np.asarray(k, dtype=float)
    lo = np.where(k > 0, beta.ppf(alpha / 2, np.maximum(k, 1), n - k + 1), 0.0)
    hi = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1)), 1.0)
    return lo, hi


def confidence_boxes(counts: Counts, delta: float = 0.1, source_marginals: bool = False) -> Boxes:
    """Clopper-Pearson boxes with a union bound: each interval at level delta / (K^2 + K), or
    delta / (K^2 + 2K) with ``source_marginals`` (K more intervals, on the source class counts, which only the
    joint formulation of :func:`lp_region` uses)."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    K, n, m = counts.K, counts.n, counts.m
    alpha = delta / (K * K + K + (K if source_marginals else 0))
    C_lo, C_hi = clopper_pearson(counts.joint, n, alpha)
    mu_lo, mu_hi = clopper_pearson(counts.target, m, alpha)
    p_lo = p_hi = None
    if source_marginals:
        p_lo, p_hi = clopper_pearson(counts.joint.sum(axis=0), n, alpha)
    return Boxes(C_lo, C_hi, mu_lo, mu_hi, p_lo, p_hi, delta)


# ---------------------------------------------------------------- baseline: interval Gaussian elimination

def _mul(a_lo, a_hi, b_lo, b_hi):
    with np.errstate(invalid="ignore"):
        prods = np.stack([a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi])
    bad = np.isnan(prods).any(axis=0)  # 0 * inf: no information
    return np.where(bad, -np.inf, prods.min(axis=0)), np.where(bad, np.inf, prods.max(axis=0))


def _div(a_lo, a_hi, b_lo, b_hi):  # caller guarantees 0 not in [b_lo, b_hi]
    return _mul(a_lo, a_hi, 1.0 / b_hi, 1.0 / b_lo)


def gaussian_elimination(boxes: Boxes) -> WeightIntervals:
    """Interval Gaussian elimination (no pivoting) on [C | mu], then w >= 0.

    When a pivot interval contains 0 elimination breaks down and every interval is [0, inf).
    """
    start = time.perf_counter()
    K = boxes.K
    A_lo = np.hstack([boxes.C_lo, boxes.mu_lo[:, None]]).astype(float)
    A_hi = np.hstack([boxes.C_hi, boxes.mu_hi[:, None]]).astype(float)
    for k in range(K):
        if A_lo[k, k] <= 0 <= A_hi[k, k]:  # the pivot may be 0: no enclosure
            return WeightIntervals(np.zeros(K), np.full(K, np.inf), "ge", time.perf_counter() - start)
        f_lo, f_hi = _div(A_lo[k + 1:, k], A_hi[k + 1:, k], A_lo[k, k], A_hi[k, k])
        p_lo, p_hi = _mul(f_lo[:, None], f_hi[:, None], A_lo[k, k + 1:][None], A_hi[k, k + 1:][None])
        A_lo[k + 1:, k + 1:], A_hi[k + 1:, k + 1:] = A_lo[k + 1:, k + 1:] - p_hi, A_hi[k + 1:, k + 1:] - p_lo
        A_lo[k + 1:, k] = A_hi[k + 1:, k] = 0.0
    x_lo, x_hi = np.zeros(K), np.zeros(K)
    for k in reversed(range(K)):
        s_lo, s_hi = _mul(A_lo[k, k + 1:K], A_hi[k, k + 1:K], x_lo[k + 1:], x_hi[k + 1:])
        x_lo[k], x_hi[k] = _div(A_lo[k, K] - s_hi.sum(), A_hi[k, K] - s_lo.sum(), A_lo[k, k], A_hi[k, k])
    x_lo, x_hi = np.nan_to_num(x_lo, nan=-np.inf), np.nan_to_num(x_hi, nan=np.inf)
    return WeightIntervals(np.maximum(x_lo, 0.0), np.maximum(x_hi, 0.0), "ge", time.perf_counter() - start)


# ---------------------------------------------------------------- ours: the LP region

def tighten(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shrink boxes on non-negative numbers known to sum to 1: x_i >= 1 - sum_{j != i} hi_j, etc."""
    lo, hi = np.maximum(lo, 0.0), np.minimum(hi, 1.0)
    return np.maximum(lo, 1 - (hi.sum() - hi)), np.minimum(hi, 1 - (lo.sum() - lo))


def _boxes_for_lp(boxes: Boxes) -> tuple[np.ndarray, ...]:
    """Boxes shrunk with sum_ij C_ij = 1, sum_i mu_i = 1, sum_j p_j = 1 and p = column sums of C."""
    K = boxes.K
    L, U = (v.reshape(K, K) for v in tighten(boxes.C_lo.ravel(), boxes.C_hi.ravel()))
    mu_lo, mu_hi = tighten(boxes.mu_lo, boxes.mu_hi)
    p_lo, p_hi = L.sum(axis=0), U.sum(axis=0)
    if boxes.p_lo is not None:
        p_lo, p_hi = np.maximum(p_lo, boxes.p_lo), np.minimum(p_hi, boxes.p_hi)
    p_lo, p_hi = tighten(p_lo, p_hi)
    return L, U, mu_lo, mu_hi, p_lo, p_hi


def compact_constraints(boxes: Boxes) -> dict:
    """``linprog`` arguments for the region in x = (w, mu): 2K variables.

    For fixed (w, mu) the q_ij of row i only meet the row constraint sum_j q_ij = mu_i, so they exist
    iff (L w)_i <= mu_i <= (U w)_i (the Oettli-Prager condition for w >= 0). Projecting q out this way
    is exact for the entry boxes, the mu box and sum_i mu_i = 1; it drops only the source-marginal
    column constraints of ``joint_constraints``, which couple rows.
    """
    K = boxes.K
    L, U, mu_lo, mu_hi, _, _ = _boxes_for_lp(boxes)
    eye = np.eye(K)
    A_ub = np.block([[L, -eye], [-U, eye]])  # L w - mu <= 0 ; mu - U w <= 0
    A_eq = np.r_[np.zeros(K), np.ones(K)][None]
    bounds = [(0.0, None)] * K + list(zip(mu_lo, mu_hi, strict=True))
    return dict(A_ub=A_ub, b_ub=np.zeros(2 * K), A_eq=A_eq, b_eq=np.ones(1), bounds=bounds)


def joint_constraints(boxes: Boxes) -> dict:
    """``linprog`` arguments for the region in x = (w, mu, q) (q row-major, q_ij = C_ij w_j): K^2 + 2K variables.

    Constraints (all hold for the true values whenever they lie in their boxes):
      L_ij w_j <= q_ij <= U_ij w_j        entry boxes of C, exact because w >= 0
      sum_j q_ij = mu_i,  mu in its box    target marginal mu = C w
      sum_i mu_i = 1                       mu is a distribution (so sum_ij q_ij = 1: p_target sums to 1)
      Lp_j w_j <= sum_i q_ij <= Up_j w_j   source label marginal p_j = sum_i C_ij in its box
      q >= 0, w >= 0
    """
    K = boxes.K
    L, U, mu_lo, mu_hi, p_lo, p_hi = _boxes_for_lp(boxes)
    nv = 2 * K + K * K
    qi = (2 * K + np.arange(K * K)).reshape(K, K)  # column index of q_ij
    wj = np.tile(np.arange(K), K)  # w index for each q (row-major)
    rows = np.arange(K * K)
    ones = np.ones(K * K)
    # L_ij w_j - q_ij <= 0 ; q_ij - U_ij w_j <= 0
    box_lo = sparse.csr_matrix((np.r_[L.ravel(), -ones], (np.r_[rows, rows], np.r_[wj, qi.ravel()])), (K * K, nv))
    box_hi = sparse.csr_matrix((np.r_[-U.ravel(), ones], (np.r_[rows, rows], np.r_[wj, qi.ravel()])), (K * K, nv))
    # Lp_j w_j - sum_i q_ij <= 0 ; sum_i q_ij - Up_j w_j <= 0
    col_rows = np.r_[np.arange(K), np.repeat(np.arange(K), K)]
    col_cols = np.r_[np.arange(K), qi.T.ravel()]
    col_lo = sparse.csr_matrix((np.r_[p_lo, -ones], (col_rows, col_cols)), (K, nv))
    col_hi = sparse.csr_matrix((np.r_[-p_hi, ones], (col_rows, col_cols)), (K, nv))
    A_ub = sparse.vstack([box_lo, box_hi, col_lo, col_hi]).tocsr()
    # sum_j q_ij - mu_i = 0 ; sum_i mu_i = 1
    row_rows = np.r_[np.repeat(np.arange(K), K), np.arange(K)]
    row_cols = np.r_[qi.ravel(), K + np.arange(K)]
    row_sum = sparse.csr_matrix((np.r_[ones, -np.ones(K)], (row_rows, row_cols)), (K, nv))
    total = sparse.csr_matrix((np.ones(K), (np.zeros(K, int), K + np.arange(K))), (1, nv))
    A_eq = sparse.vstack([row_sum, total]).tocsr()
    bounds = [(0.0, None)] * K + list(zip(mu_lo, mu_hi, strict=True)) + [(0.0, None)] * (K * K)
    return dict(A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=np.r_[np.zeros(K), 1.0], bounds=bounds)


def lp_region(boxes: Boxes, formulation: str = "compact") -> WeightIntervals:
    """Marginal intervals [min w_k, max w_k] over the region: 2K linear programs (HiGHS dual simplex).

    ``formulation``: "compact" (the default: 2K variables) or "joint" (on request: K^2 + 2K variables, adds
    the source-marginal column constraints, which changed widths by under 1% and cost 15-30x the time).

    Raises ``EmptyRegionError`` when no point fits: then the boxes missed a true value (probability
    <= delta) or the data contradict label shift.
    """
    start = time.perf_counter()
    K = boxes.K
    if formulation not in ("compact", "joint"):
        raise ValueError(f"formulation must be compact or joint, got {formulation!r}")
    problem = compact_constraints(boxes) if formulation == "compact" else joint_constraints(boxes)
    lo, hi = np.zeros(K), np.full(K, np.inf)
    c = np.zeros(problem["A_ub"].shape[1])
    for k in range(K):
        for sign in (1.0, -1.0):
            c[k] = sign
            res = linprog(c, method="highs-ds", **problem)
            c[k] = 0.0
            if res.status == 2:
                raise EmptyRegionError("the confidence region for w is empty: no confusion matrix and target "
                                       "marginal inside the boxes are consistent with label shift (either a box "
                                       f"missed its true value, probability <= delta = {boxes.delta}, or label "
                                       "shift does not hold)")
            if res.status == 3:  # unbounded above
                continue
            if res.status != 0:
                raise RuntimeError(f"linear program for w_{k} failed: {res.message}")
            if sign > 0:
                lo[k] = max(res.fun, 0.0)
            else:
                hi[k] = -res.fun
    return WeightIntervals(lo, hi, "lp", time.perf_counter() - start)
