"""Do the top-ranked components matter? Ablate or amplify them and measure the expected outcome.

Every condition is measured on the same prompts with the same sampling seeds (common random numbers),
so differences to the unmodified model are paired per prompt. Intervals are two-sided 95% t-intervals:
over prompts for a fixed component set, over seeds for random sets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from scipy import stats

from .estimator import Score
from .policy import Policy


@dataclass
class Row:
    """One condition: its mean outcome and the change from the unmodified model, with a 95% interval."""

    condition: str  # base, ablate, amplify
    ranking: str  # ipg, activation, ..., random, or "" for base
    k: int
    factor: float  # multiplier put on the k components (0 for ablation; gamma)
    seed: int  # random-set seed; -1 for a ranking, or for the mean over seeds
    outcome: float  # mean over prompts (and seeds)
    outcome_low: float  # 95% interval of the outcome, over prompts
    outcome_high: float
    delta: float  # outcome - base outcome
    delta_low: float  # 95% interval of the change: paired over prompts, or over seeds for the random mean
    delta_high: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores (signed: components that raise the outcome most)."""
    return np.argsort(-scores, kind="stable")[:k]


def random_k(n: int, k: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).choice(n, size=k, replace=False)


def t_interval(values: np.ndarray) -> tuple[float, float]:
    """95% t-interval for the mean of ``values`` (degenerate when fewer than two)."""
    mean = float(np.mean(values))
    if len(values) < 2:
        return mean, mean
    half = stats.t.ppf(0.975, len(values) - 1) * float(np.std(values, ddof=1)) / np.sqrt(len(values))
    return mean - half, mean + half


def expected_outcomes(policy: Policy, prompts: Sequence[Any], answers: Sequence[Any], score: Score,
                      scales: torch.Tensor, offsets: torch.Tensor | None, samples: int, seed: int,
                      batch_rows: int = 64, progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Mean outcome [Q, P] of each of Q conditions (multipliers ``scales`` [Q, C], ``offsets`` [Q, C] or None)
    on each prompt, over ``samples`` trajectories. All conditions of a prompt are sampled in the same batches
    and sample j of every condition uses the same uniforms (common random numbers)."""
    Q = scales.shape[0]
    row_scales = scales.repeat_interleave(samples, 0).to(policy.device, torch.float32)
    row_offsets = None if offsets is None else offsets.repeat_interleave(samples, 0).to(policy.device, torch.float32)
    result = np.zeros((Q, len(prompts)))
    for p, (prompt, answer) in enumerate(zip(prompts, answers, strict=True)):
        generator = torch.Generator().manual_seed(seed * 1_000_003 + p)
        uniforms = torch.rand(samples, policy.horizon, generator=generator).repeat(Q, 1)
        rewards = []
        for start in range(0, Q * samples, batch_rows):
            chunk = slice(start, start + batch_rows)
            rollouts = policy.sample(prompt, row_scales[chunk], uniforms[chunk],
                                     None if row_offsets is None else row_offsets[chunk])
            rewards += [float(score(out, answer)) for out in policy.outputs(rollouts)]
        result[:, p] = np.array(rewards).reshape(Q, samples).mean(1)
        if progress is not None:
            progress(1)
    return result


def validate(policy: Policy, prompts: Sequence[Any], answers: Sequence[Any], score: Score,
             rankings: dict[str, np.ndarray], k: int, seeds: int = 3, gamma: float = 2.0, samples: int = 16,
             means: np.ndarray | None = None, seed: int = 0, batch_rows: int = 64,
             progress: Callable[[int], None] | None = None) -> list[Row]:
    """Ablate the top-k of each ranking and ``seeds`` random k-sets; amplify by ``gamma`` the top-k of the
    first ranking and the random sets. ``means`` switches ablation from zero to mean ablation.
    ``progress`` is called with 1 after each prompt."""
    n = policy.n_components
    if not 1 <= k <= n:
        raise ValueError(f"k must be in 1..{n} (the number of components), not {k}")
    # (condition, ranking, factor, random seed, components)
    plan: list[tuple[str, str, float, int, np.ndarray]] = [("base", "", 1.0, -1, np.array([], dtype=int))]
    plan += [("ablate", name, 0.0, -1, top_k(scores, k)) for name, scores in rankings.items()]
    plan += [("ablate", "random", 0.0, s, random_k(n, k, s)) for s in range(seeds)]
    if gamma != 1.0 and rankings:
        first = next(iter(rankings))
        plan += [("amplify", first, gamma, -1, top_k(rankings[first], k))]
        plan += [("amplify", "random", gamma, s, random_k(n, k, s)) for s in range(seeds)]
    scales = torch.ones(len(plan), n)
    offsets = None if means is None else torch.zeros(len(plan), n)
    for q, (_, _, factor, _, idx) in enumerate(plan):
        scales[q, idx] = factor
        if offsets is not None and factor == 0:
            offsets[q, idx] = torch.as_tensor(means[idx], dtype=torch.float32)
    outs = expected_outcomes(policy, prompts, answers, score, scales, offsets, samples, seed, batch_rows, progress)
    base = outs[0]
    rows = []
    for (condition, ranking, factor, rseed, _), out in zip(plan, outs, strict=True):
        rows.append(Row(condition, ranking, 0 if condition == "base" else k, factor, rseed, float(out.mean()),
                        *t_interval(out), float((out - base).mean()), *t_interval(out - base)))
        if ranking == "random" and rseed == seeds - 1:  # the mean over the random sets, after the last one
            group = np.stack([o for (c, r, *_), o in zip(plan, outs, strict=True) if c == condition and r == "random"])
            deltas = (group - base).mean(1)  # one change per seed
            rows.append(Row(condition, "random", k, factor, -1, float(group.mean()), *t_interval(group.mean(0)),
                            float(deltas.mean()), *t_interval(deltas)))
    return rows
