"""Lost in Conversation's metrics over N simulations of an instruction, averaged over instructions.

Per instruction, from its N simulation scores: performance P = mean, aptitude A = 90th percentile,
unreliability U = 90th - 10th percentile (percentiles with linear interpolation, numpy's default). A setting's
P, A, U are the means over instructions; their 95% intervals are percentile bootstraps over instructions
(fixed seed). Degradation = (P_full - P_sharded) / P_full.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

BOOTSTRAP = 1000


def performance(scores: Sequence[float]) -> float:
    """P of one instruction: the mean of its simulation scores."""
    return float(np.mean(scores))


def aptitude(scores: Sequence[float]) -> float:
    """A of one instruction: the 90th percentile of its simulation scores."""
    return float(np.percentile(scores, 90))


def unreliability(scores: Sequence[float]) -> float:
    """U of one instruction: the 90th minus the 10th percentile of its simulation scores."""
    return float(np.percentile(scores, 90) - np.percentile(scores, 10))


PER_INSTRUCTION = {"P": performance, "A": aptitude, "U": unreliability}


def interval(values: Sequence[float], seed: int = 0, n_boot: int = BOOTSTRAP) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean of per-instruction values."""
    data = np.asarray(values, float)
    if len(data) < 2:
        return float(data.mean()), float(data.mean())
    means = data[np.random.default_rng(seed).integers(0, len(data), (n_boot, len(data)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def summarise(scores: Mapping[str, Sequence[float]], seed: int = 0) -> dict[str, float | list[float]]:
    """P, A, U (and their intervals) of one setting from ``{instruction id: its N simulation scores}``."""
    out: dict[str, float | list[float]] = {"instructions": float(len(scores))}
    for name, fn in PER_INSTRUCTION.items():
        values = [fn(s) for s in scores.values()]
        out[name] = float(np.mean(values))
        out[f"{name}_ci"] = list(interval(values, seed))
    return out


def degradation(full: Mapping[str, Sequence[float]], sharded: Mapping[str, Sequence[float]],
                seed: int = 0, n_boot: int = BOOTSTRAP) -> dict[str, float | list[float] | None]:
    """(P_full - P_sharded) / P_full over the instructions both settings ran, with a paired bootstrap interval;
    None when P_full is 0."""
    ids = sorted(set(full) & set(sharded))
    f = np.array([performance(full[i]) for i in ids])
    s = np.array([performance(sharded[i]) for i in ids])
    if not len(ids) or f.mean() == 0:
        return {"degradation": None, "degradation_ci": None}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(ids), (n_boot, len(ids)))
    fm, sm = f[draws].mean(axis=1), s[draws].mean(axis=1)
    ratios = (fm - sm)[fm > 0] / fm[fm > 0]
    low, high = np.percentile(ratios, [2.5, 97.5]) if len(ratios) else (np.nan, np.nan)
    return {"degradation": float((f.mean() - s.mean()) / f.mean()), "degradation_ci": [float(low), float(high)]}


def recovery(p_full: float, sharded_before: float, sharded_after: float) -> float | None:
    """FiC's recovery: (P_sharded,after - P_sharded,before) / (P_full - P_sharded,before); None when the gap is
    not positive (nothing to recover)."""
    gap = p_full - sharded_before
    return None if gap <= 0 else (sharded_after - sharded_before) / gap
