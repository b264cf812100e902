"""The real-data label-shift experiment shared by ``bench/labelshift.py`` and the tests.

A classifier is trained once on a split of a scikit-learn dataset (digits, wine, breast cancer:
real data shipped with the package). The held-out rest is a finite population whose class-conditional
distributions p(x | y) are the empirical ones, so sampling from it with any class prior is exact label
shift with known weights w = p_target / p_source. Each repetition draws a source sample (uniform
prior) for the boxes, an independent source calibration sample for the prediction sets and a target
sample with a Dirichlet or "tweak one class" prior; the sets' target error and size are computed
exactly on the population.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .data import Counts
from .errors import EmptyRegionError
from .estimators import bbse
from .intervals import confidence_boxes, gaussian_elimination, lp_region
from .prediction_sets import conformal_thresholds, pac_threshold

DATASETS = ("digits", "wine", "breast_cancer")
SHIFTS = ("dirichlet", "tweak_one")


@dataclass(frozen=True)
class Population:
    """Held-out examples of one dataset with the trained classifier's probabilities."""

    name: str
    labels: np.ndarray
    probs: np.ndarray
    accuracy: float

    @property
    def K(self) -> int:
        return self.probs.shape[1]

    @property
    def scores(self) -> np.ndarray:
        """p(y | x) of the true label."""
        return self.probs[np.arange(len(self.labels)), self.labels]

    def sample(self, n: int, prior: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Indices of n i.i.d. draws: y ~ prior, then x uniform among the population's class-y examples."""
        counts = rng.multinomial(n, prior)
        return np.concatenate([rng.choice(np.flatnonzero(self.labels == k), c) for k, c in enumerate(counts)])

    def class_means(self, values: np.ndarray) -> np.ndarray:
        """Per-class population mean of ``values`` (one value per example)."""
        return np.array([values[self.labels == k].mean() for k in range(self.K)])


def population(name: str, train_fraction: float = 0.3, seed: int = 0) -> Population:
    """Train a standardised logistic regression on a stratified split; the rest is the population."""
    from sklearn import datasets
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    X_tr, X_pop, y_tr, y_pop = train_test_split(X, y, train_size=train_fraction, stratify=y, random_state=seed)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000)).fit(X_tr, y_tr)
    probs = model.predict_proba(X_pop)
    return Population(name, y_pop, probs, float((probs.argmax(1) == y_pop).mean()))


def target_prior(kind: str, K: int, rng: np.random.Generator, alpha: float = 1.0, rho: float = 0.5) -> np.ndarray:
    """Dirichlet(alpha) prior, or "tweak one": a random class gets rho, the others share 1 - rho."""
    if kind == "dirichlet":
        return rng.dirichlet(np.full(K, alpha))
    if kind == "tweak_one":
        prior = np.full(K, (1 - rho) / (K - 1))
        prior[rng.integers(K)] = rho
        return prior
    raise ValueError(f"unknown shift {kind!r}; choose from {', '.join(SHIFTS)}")


@dataclass(frozen=True)
class Config:
    n_source: int = 2000
    n_calibration: int = 5000
    n_target: int = 2000
    delta: float = 0.05  # weight intervals: simultaneous coverage >= 1 - delta
    epsilon: float = 0.03  # PAC sets: target error <= epsilon ...
    delta_sets: float = 0.05  # ... w.p. >= 1 - delta - delta_sets
    alpha: float = 1.0  # Dirichlet concentration
    rho: float = 0.5  # tweak-one mass


def trial(pop: Population, shift: str, cfg: Config, rng: np.random.Generator) -> list[dict]:
    """One repetition: one record per method (lp, ge, oracle PAC, weighted conformal)."""
    K = pop.K
    p_s = np.full(K, 1.0 / K)
    p_t = target_prior(shift, K, rng, cfg.alpha, cfg.rho)
    w = p_t / p_s
    src, cal, tgt = pop.sample(cfg.n_source, p_s, rng), pop.sample(cfg.n_calibration, p_s, rng), pop.sample(
        cfg.n_target, p_t, rng)
    joint = np.zeros((K, K), dtype=np.int64)
    np.add.at(joint, (pop.probs[src].argmax(1), pop.labels[src]), 1)
    counts = Counts(np.arange(K), joint, np.bincount(pop.probs[tgt].argmax(1), minlength=K))
    scores, y_cal = pop.scores[cal], pop.labels[cal]
    u_seed = int(rng.integers(2**32))  # same uniforms for every method's rejection sampling

    def pac(lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
        tau = pac_threshold(scores, y_cal, lo, hi, cfg.epsilon, cfg.delta_sets, np.random.default_rng(u_seed))
        error = p_t @ pop.class_means(pop.scores < tau)
        size = p_t @ pop.class_means((pop.probs >= tau).sum(1))
        return float(error), float(size)

    records = []
    start = time.perf_counter()
    boxes = confidence_boxes(counts, cfg.delta)
    box_seconds = time.perf_counter() - start
    for name, method in (("ge", gaussian_elimination), ("lp", lp_region)):
        rec = dict(method=name, shift=shift, dataset=pop.name, K=K)
        try:
            iv = method(boxes)
        except EmptyRegionError:
            rec.update(empty=True, covered_all=False, covered_frac=0.0, width=np.nan, ps_error=np.nan,
                       ps_size=float(K), seconds=np.nan, bounded=False)
            records.append(rec)
            continue
        inside = iv.contains(w)
        error, size = pac(iv.lo, iv.hi)
        rec.update(empty=False, covered_all=bool(inside.all()), covered_frac=float(inside.mean()),
                   width=float(iv.width.mean()), bounded=bool(np.isfinite(iv.hi).all()),
                   ps_error=error, ps_size=size, seconds=box_seconds + iv.seconds, widths=iv.width)
        records.append(rec)
    error, size = pac(w, w)
    records.append(dict(method="oracle", shift=shift, dataset=pop.name, K=K, ps_error=error, ps_size=size))
    try:
        w_hat = bbse(counts.confusion, counts.mu)
    except ValueError:
        w_hat = np.ones(K)
    q = conformal_thresholds(scores, y_cal, w_hat, cfg.epsilon)
    error = p_t @ pop.class_means(1 - pop.scores > q[pop.labels])
    size = p_t @ pop.class_means((1 - pop.probs <= q[None, :]).sum(1))
    records.append(dict(method="conformal", shift=shift, dataset=pop.name, K=K, ps_error=float(error),
                        ps_size=float(size), bbse_error=float(np.abs(w_hat - w).max())))
    return records


def synthetic(K: int, n: int, m: int, accuracy: float,
              rng: np.random.Generator) -> tuple[Counts, np.ndarray, np.ndarray]:
    """Counts (and the true joint C and weights w) from a random confusion matrix.

    p(yhat | y) = accuracy I + (1 - accuracy) Dirichlet(1) columns; Dirichlet(5) source prior,
    Dirichlet(1) target prior.
    """
    M = accuracy * np.eye(K) + (1 - accuracy) * rng.dirichlet(np.ones(K), size=K).T
    p_s, p_t = rng.dirichlet(np.full(K, 5.0)), rng.dirichlet(np.ones(K))
    C = M * p_s
    joint = rng.multinomial(n, C.ravel()).reshape(K, K)
    return Counts(np.arange(K), joint, rng.multinomial(m, M @ p_t)), C, p_t / p_s


def run(pop: Population, shift: str, reps: int, cfg: Config = Config(), seed: int = 0,
        progress: Callable[[], None] | None = None) -> list[dict]:
    """``reps`` independent repetitions; ``progress`` is called after each."""
    rng = np.random.default_rng([seed, DATASETS.index(pop.name), SHIFTS.index(shift)])
    records = []
    for _ in range(reps):
        records += trial(pop, shift, cfg, rng)
        if progress is not None:
            progress()
    return records


def summarize(records: list[dict], cfg: Config = Config()) -> list[dict]:
    """One row per (dataset, shift, method): coverage, width, PAC set size/error, runtime."""
    rows = []
    keys = list(dict.fromkeys((r["dataset"], r["shift"], r["method"]) for r in records))
    for dataset, shift, method in keys:
        rs = [r for r in records if (r["dataset"], r["shift"], r["method"]) == (dataset, shift, method)]
        row = dict(dataset=dataset, shift=shift, method=method, K=rs[0]["K"], reps=len(rs),
                   ps_size=float(np.mean([r["ps_size"] for r in rs])),
                   ps_error=float(np.nanmean([r["ps_error"] for r in rs])),
                   ps_violations=float(np.mean([r["ps_error"] > cfg.epsilon for r in rs])))
        if "covered_all" in rs[0]:
            widths = [r["width"] for r in rs if not r["empty"]]
            row.update(coverage_all=float(np.mean([r["covered_all"] for r in rs])),
                       coverage_class=float(np.mean([r["covered_frac"] for r in rs])),
                       width=float(np.mean(widths)) if widths else np.nan,
                       bounded=float(np.mean([r["bounded"] for r in rs])),
                       empty=float(np.mean([r["empty"] for r in rs])),
                       seconds=float(np.nanmean([r["seconds"] for r in rs])))
        rows.append(row)
    ge_width = {(r["dataset"], r["shift"]): r["width"] for r in rows if r["method"] == "ge"}
    for row in rows:
        if row["method"] == "lp":
            row["width_ratio"] = row["width"] / ge_width[row["dataset"], row["shift"]]
    return rows
