"""Paired comparisons of two submissions, document by document: a bootstrap of the mean difference.

Both submissions' per-document scores come from their samples files (every submission has them), matched by
doc_id; a doc_id naming different documents in the two (their doc_hash differs) means the runs read different data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.errors import UnknownNameError

from .store import Store


@dataclass(frozen=True)
class BootstrapResult:
    """Paired bootstrap of ``a - b`` over the documents both submissions scored."""

    mean_diff: float  # mean over documents of a's score minus b's
    ci_low: float  # 95% percentile interval of the mean difference
    ci_high: float
    p_value: float  # two-sided, against "no difference" (see paired_bootstrap)
    n_docs: int
    task: str = ""
    metric: str = ""
    n_boot: int = 0


def paired_bootstrap(store: Store, a_id: int, b_id: int, task: str, metric: str | None = None,
                     n_boot: int = 10_000, seed: int = 0) -> BootstrapResult:
    """Compare two submissions document by document (matched by doc_id) on ``task``'s ``metric`` (its primary
    metric by default). Resamples the documents ``n_boot`` times with replacement; the p-value is the share of
    resampled mean differences at least as far from the observed one as the observed one is from 0 (the
    bootstrap distribution shifted to the null), with add-one smoothing: ``(1 + count) / (1 + n_boot)``.

    ValueError when ``metric`` is corpus-level (macro-F1: no per-document score), when either submission has no
    samples file for ``task``, when they share no document, or when a doc_id names different documents in the two
    (their doc_hash differs: the runs used different data).
    """
    spec = store.tasks.get(task)
    if spec is None:
        raise UnknownNameError(f"unknown task {task!r}; tasks: {', '.join(sorted(store.tasks))}")
    metric = metric or spec.primary
    if metric not in spec.metrics:
        raise ValueError(f"{task} has no metric {metric!r} (its metrics: {', '.join(spec.metrics)})")
    if spec.metrics[metric].aggregate is not None:
        means = [m for m, s in spec.metrics.items() if s.aggregate is None]
        raise ValueError(f"{metric} of {task} is corpus-level (an aggregate of all documents, not a mean of "
                         f"per-document scores): no document-by-document comparison; compare on "
                         f"{' or '.join(means) or 'a mean metric'}")
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    a, b = (store.sample_table(i, task, metric) for i in (a_id, b_id))
    for i, table in ((a_id, a), (b_id, b)):
        if table.num_rows == 0:
            raise ValueError(f"submission {i} has no samples file for {task}: paired comparison needs one")
    a_rows = dict(zip(a["doc_id"].to_pylist(), zip(a["value"].to_pylist(), a["doc_hash"].to_pylist(),
                                                     strict=True), strict=True))
    diffs = []
    for doc_id, b_value, b_hash in zip(*(b[c].to_pylist() for c in ("doc_id", "value", "doc_hash")), strict=True):
        if doc_id not in a_rows:
            continue
        a_value, a_hash = a_rows[doc_id]
        if a_hash and b_hash and a_hash != b_hash:
            raise ValueError(f"doc_id {doc_id} of {task} is a different document in submissions {a_id} and {b_id}")
        diffs.append(a_value - b_value)
    if not diffs:
        raise ValueError(f"submissions {a_id} and {b_id} share no document of {task}")
    d = np.asarray(diffs)
    observed = float(d.mean())
    means = bootstrap_means(d, n_boot, seed)
    ci_low, ci_high = np.quantile(means, [0.025, 0.975])
    extreme = int(np.count_nonzero(np.abs(means - observed) >= abs(observed) - 1e-12))
    return BootstrapResult(observed, float(ci_low), float(ci_high), (1 + extreme) / (1 + n_boot), len(d), task,
                           metric, n_boot)


def bootstrap_means(values: np.ndarray, n_boot: int, seed: int = 0, chunk: int = 2**22) -> np.ndarray:
    """Means of ``n_boot`` resamples (with replacement) of ``values``; memory bounded by ``chunk`` draws."""
    rng = np.random.default_rng(seed)
    n = len(values)
    rows = max(1, chunk // n)
    out = np.empty(n_boot)
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        out[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    return out

