"""Label shift: the LP confidence region gives tighter weight intervals than interval Gaussian elimination.

The real-data experiment of ``bench/labelshift.py`` (``neurips26.methods.labelshift.experiment``): for each of
scikit-learn's bundled digits (K = 10), wine (K = 3) and breast cancer (K = 2) datasets a standardised logistic
regression is trained on 30% of the data (split by the seed) and the other 70% is a finite population, so
sampling it with any class prior is exact label shift with known weights w = p_target / p_source. Each
repetition draws 2000 source examples (uniform prior) and 2000 target examples (Dirichlet or "tweak one" prior),
builds the same Clopper-Pearson boxes (simultaneous level 1 - delta, delta = 0.05) and reads the intervals of
w off them twice: interval Gaussian elimination (``ge``, Si et al., ICLR 2024) and the LP region (``lp``).

Metric: the mean width of the K intervals in one repetition (lower is better); items are the repetitions,
paired across arms (the same boxes), pooled over datasets and shifts; each (dataset, shift) is a condition.
Coverage (all K true weights inside their intervals) is kept in ``extra``: the claim is a narrower region at the
same guarantee. Neither arm trains anything beyond the shared classifier, so ``train_steps`` is 0 for both. A
repetition where GE is unbounded or the LP region is empty would be left out of the widths and counted in
``extra`` (``ge_unbounded``, ``lp_empty``).
"""

from __future__ import annotations

import numpy as np
from neurips26.methods.labelshift import EmptyRegionError, confidence_boxes, gaussian_elimination, lp_region
from neurips26.methods.labelshift.data import Counts
from neurips26.methods.labelshift.experiment import DATASETS, SHIFTS, Config, Population, population, target_prior

from claims.core import CLAIMS, Arm, Outcome

# scale -> (datasets, repetitions per dataset, shift and seed)
SCALES = {"tiny": (("wine",), 3), "default": (DATASETS, 100), "large": (DATASETS, 500)}
CONFIG = Config()


def repetition(pop: Population, shift: str, cfg: Config, rng: np.random.Generator) -> dict[str, tuple[float, bool]]:
    """One draw of source and target samples: each method's mean interval width and whether it covers w."""
    K = pop.K
    p_source = np.full(K, 1.0 / K)
    p_target = target_prior(shift, K, rng, cfg.alpha, cfg.rho)
    w = p_target / p_source
    src, tgt = pop.sample(cfg.n_source, p_source, rng), pop.sample(cfg.n_target, p_target, rng)
    joint = np.zeros((K, K), dtype=np.int64)
    np.add.at(joint, (pop.probs[src].argmax(1), pop.labels[src]), 1)
    boxes = confidence_boxes(Counts(np.arange(K), joint, np.bincount(pop.probs[tgt].argmax(1), minlength=K)),
                             cfg.delta)
    out = {}
    for name, method in (("ge", gaussian_elimination), ("lp", lp_region)):
        try:
            iv = method(boxes)
        except EmptyRegionError:
            out[name] = (float("nan"), False)
            continue
        out[name] = (float(iv.width.mean()), bool(iv.contains(w).all()))
    return out


def _share(flags: list[bool]) -> float:
    return float(np.mean(flags)) if flags else float("nan")


@CLAIMS.register("labelshift", method="Label-shift LP confidence region",
                 claim="Reading the importance-weight intervals off the LP region of the Clopper-Pearson boxes gives "
                       "narrower intervals than interval Gaussian elimination on the same boxes, while keeping the "
                       "1 - delta coverage of the true label-shift weights.",
                 metric="mean interval width of the K weights", direction="lower",
                 baseline="interval Gaussian elimination on the same boxes (Si et al., ICLR 2024)",
                 method_arm="lp", baseline_arm="ge")
def labelshift(scale: str, seeds: list[int]) -> Outcome:
    """LP region against interval Gaussian elimination on scikit-learn's digits, wine and breast cancer."""
    datasets, reps = SCALES[scale]
    settings = [f"{d}/{s}" for d in datasets for s in SHIFTS]
    widths = {m: {c: [[] for _ in seeds] for c in settings} for m in ("lp", "ge")}
    covered: dict[str, dict[str, list[bool]]] = {m: {c: [] for c in settings} for m in ("lp", "ge")}
    ge_unbounded = lp_empty = 0
    for i, seed in enumerate(seeds):
        for name in datasets:
            pop = population(name, seed=seed)
            for shift in SHIFTS:
                rng = np.random.default_rng([seed, DATASETS.index(name), SHIFTS.index(shift)])
                for _ in range(reps):
                    rec = repetition(pop, shift, CONFIG, rng)
                    ge_unbounded += not np.isfinite(rec["ge"][0])
                    lp_empty += bool(np.isnan(rec["lp"][0]))
                    for m in ("lp", "ge"):
                        covered[m][f"{name}/{shift}"].append(rec[m][1])
                    if np.isfinite(rec["ge"][0]) and np.isfinite(rec["lp"][0]):
                        for m in ("lp", "ge"):
                            widths[m][f"{name}/{shift}"][i].append(rec[m][0])

    def arm(method: str, conditions: list[str]) -> Arm:
        items = [[w for c in conditions for w in widths[method][c][i]] for i in range(len(seeds))]
        return Arm(values=[float(np.mean(x)) for x in items], items=items, compute={"train_steps": 0})

    lp_all, ge_all = arm("lp", settings), arm("ge", settings)
    conditions = {c: {"lp": arm("lp", [c]), "ge": arm("ge", [c])} for c in settings}
    every = {m: [f for c in settings for f in covered[m][c]] for m in ("lp", "ge")}
    extra = {
        "coverage": {m: _share(every[m]) for m in ("lp", "ge")},
        "coverage_guarantee": 1 - CONFIG.delta,
        "width_ratio": float(np.mean(lp_all.values) / np.mean(ge_all.values)),
        "width_ratio_by_condition": {c: float(np.mean(a["lp"].values) / np.mean(a["ge"].values))
                                     for c, a in conditions.items()},
        "lp_coverage_by_condition": {c: _share(covered["lp"][c]) for c in settings},
        "ge_coverage_by_condition": {c: _share(covered["ge"][c]) for c in settings},
        "repetitions_per_condition_and_seed": reps,
        "ge_unbounded": ge_unbounded, "lp_empty": lp_empty,
        "sample_sizes": {"n_source": CONFIG.n_source, "n_target": CONFIG.n_target, "delta": CONFIG.delta},
    }
    return Outcome(arms={"lp": lp_all, "ge": ge_all}, conditions=conditions, extra=extra)
