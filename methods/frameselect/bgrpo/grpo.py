"""Group Relative Policy Optimization for the selection policy (Shao et al., 2024, DeepSeekMath, section 4.1).

For one question, ``G`` ordered picks ``S_1..S_G`` are drawn from the current policy and rewarded
(``r_g = -NLL`` of the gold answer under a frozen answering model given the picked frames). The
advantage of each is its group-normalised reward ``A_g = (r_g - mean(r)) / (std(r) + eps)``
(population std). The objective per pick is ``A_g * ratio_g - beta * KL_g``, averaged over the
picks' frames (GRPO averages over tokens) and over the group, with the unbiased KL estimator of
the paper (``k3 = rho - log rho - 1``, ``rho = pi_ref(S) / pi(S)``) to the initial policy. One
gradient-ascent step per group is taken at the sampling policy, where ``ratio = 1`` and PPO's
clipping is inactive, so the gradient is

    (1 / G) sum_g (1 / |S_g|) (A_g - beta (1 - rho_g)) grad log pi(S_g).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .policy import log_prob


def advantages(rewards: Sequence[float], eps: float = 1e-8) -> np.ndarray:
    """Group-normalised advantages: (r - mean) / (population std + eps)."""
    r = np.asarray(rewards, np.float64)
    return (r - r.mean()) / (r.std() + eps)


def gradient(w: np.ndarray, w_ref: np.ndarray, phi: np.ndarray, picks: Sequence[np.ndarray],
             rewards: Sequence[float], beta: float = 0.04) -> tuple[np.ndarray, dict[str, float]]:
    """The GRPO objective's gradient in ``w`` for one group, and the group's mean KL to the reference."""
    a = advantages(rewards)
    grad, kl = np.zeros_like(w), 0.0
    for s, adv in zip(picks, a, strict=True):
        lp, g = log_prob(phi, w, s)
        lp_ref, _ = log_prob(phi, w_ref, s)
        rho = float(np.exp(lp_ref - lp))
        kl += rho - np.log(rho) - 1.0
        grad += (adv - beta * (1.0 - rho)) * g / len(s)
    return grad / len(picks), {"kl": kl / len(picks), "reward": float(np.mean(rewards))}


def step(w: np.ndarray, w_ref: np.ndarray, phi: np.ndarray, picks: Sequence[np.ndarray], rewards: Sequence[float],
         lr: float = 0.05, beta: float = 0.04) -> tuple[np.ndarray, dict[str, float]]:
    """One GRPO update (gradient ascent) of the policy weights."""
    grad, stats = gradient(w, w_ref, phi, picks, rewards, beta)
    return w + lr * grad, stats
