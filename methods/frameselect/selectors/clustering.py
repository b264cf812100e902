"""``kmeans`` and ``kmedoids``: one representative frame per cluster of the features.

- ``kmeans``: k-means with k = budget (scikit-learn, k-means++ seeding) and, per cluster,
  the member nearest its centroid, as in clustering-based keyframe extraction (Zhuang,
  Rui, Huang & Mehrotra, 1998, "Adaptive key frame extraction using unsupervised clustering").
- ``kmedoids``: k-medoids by Voronoi iteration (Park & Jun, 2009, "A simple and fast
  algorithm for K-medoids clustering") on cosine distance, seeded by k-means++ from the
  selector's rng; the medoids are the frames.

Each chosen frame's score is its cluster's share of the pool. Duplicated frames (a static
shot, a black intro) can leave fewer distinct points than the budget: a k-means cluster left
empty takes the candidate nearest its centroid not chosen yet, and k-means++ never draws a
seed twice (a chosen candidate's distance to itself counts as exactly 0).
Pools over :data:`~._common.PAIRWISE_LIMIT` candidates are thinned evenly to that many first
(the N x N matrices would not fit otherwise).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from ..core import SELECTORS, Pool, Selection
from ._common import pairwise


@SELECTORS.register("kmeans", needs=("features",))
def kmeans(pool: Pool, budget: int, rng: np.random.Generator, n_init: int | str = "auto") -> Selection:
    """The member nearest each of ``budget`` k-means centroids."""
    x = np.asarray(pool.features, np.float64)
    with warnings.catch_warnings():  # fewer distinct points than clusters: handled below
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = KMeans(n_clusters=budget, n_init=n_init, random_state=int(rng.integers(2**31))).fit(x)
    chosen, share = [], []
    taken = np.zeros(pool.n, bool)
    for c in range(budget):
        members = np.flatnonzero((model.labels_ == c) & ~taken)
        if len(members) == 0:  # an empty cluster (duplicated frames): the nearest free candidate
            members = np.flatnonzero(~taken)
        distance = np.linalg.norm(x[members] - model.cluster_centers_[c], axis=1)
        chosen.append(int(members[np.argmin(distance)]))
        taken[chosen[-1]] = True
        share.append(float(np.mean(model.labels_ == c)))
    return Selection.of(chosen, share)


def plusplus(d: np.ndarray, k: int, rng: np.random.Generator) -> list[int]:
    """k-means++ seeding on a distance matrix: each next seed drawn with probability ~ squared distance."""
    seeds = [int(rng.integers(len(d)))]
    for _ in range(k - 1):
        w = d[:, seeds].min(axis=1) ** 2
        w[seeds] = 0.0  # rounding leaves self-distances near 2e-16: a seed is never drawn twice
        seeds.append(int(rng.choice(len(d), p=w / w.sum())) if w.sum() > 1e-12 else
                     int(rng.choice(np.setdiff1d(np.arange(len(d)), seeds))))
    return seeds


@SELECTORS.register("kmedoids", needs=("features",))
@pairwise
def kmedoids(pool: Pool, budget: int, rng: np.random.Generator, max_iter: int = 50) -> Selection:
    """``budget`` medoids by Voronoi iteration on cosine distance."""
    x = np.asarray(pool.features, np.float64)
    d = np.clip(1.0 - x @ x.T, 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    medoids = np.array(plusplus(d, budget, rng))
    for _ in range(max_iter):
        labels = np.argmin(d[:, medoids], axis=1)
        labels[medoids] = np.arange(budget)  # a medoid stays in its own cluster even on ties
        new = medoids.copy()
        for c in range(budget):
            members = np.flatnonzero(labels == c)
            new[c] = members[np.argmin(d[np.ix_(members, members)].sum(axis=1))]
        if np.array_equal(new, medoids):
            break
        medoids = new
    labels = np.argmin(d[:, medoids], axis=1)
    return Selection.of(medoids, [np.mean(labels == c) for c in range(budget)])
