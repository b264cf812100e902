"""Exact expected outcomes of short answers, and the ablations and patching measured with them.

For the outcome "the first ``len(answer)`` sampled tokens are the answer's tokens", the expected outcome
under a policy is the probability of the answer, ``exp log pi(answer | prompt)``: a condition (a set of
multipliers) is measured by one teacher-forced pass, with no sampling noise. IPG itself still attributes
this outcome from sampled completions (``estimator.estimate_ipg`` with :func:`exact_match`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from .policy import Policy, Rollouts


def exact_match(output: Sequence[int], answer: Sequence[int]) -> float:
    """1.0 when a sampled completion (token ids) starts with the answer's token ids."""
    return float(tuple(output[:len(answer)]) == tuple(answer))


def answer_rollouts(answer: Tensor, rows: int) -> Rollouts:
    """``rows`` copies of the answer's tokens as trajectories."""
    return Rollouts(answer[None].expand(rows, -1), torch.ones(rows, len(answer), dtype=torch.bool))


def answer_probability(policy: Policy, prompt: Tensor, answer: Tensor, scales: Tensor,
                       offsets: Tensor | None = None) -> np.ndarray:
    """p(answer | prompt) [Q] under each row of multipliers ``scales`` [Q, C]: the exact expected outcome."""
    with torch.no_grad():
        logp = policy.log_prob(prompt, answer_rollouts(answer, scales.shape[0]), scales, offsets)
    return logp.double().exp().cpu().numpy()


def ablation_scales(n: int, sets: Sequence[np.ndarray]) -> Tensor:
    """Multipliers [len(sets), n]: ones, with the components of each set zeroed (an empty set: the model)."""
    scales = torch.ones(len(sets), n)
    for row, idx in enumerate(sets):
        scales[row, torch.as_tensor(np.asarray(idx, dtype=np.int64))] = 0.0
    return scales


def answer_gradient(policy: Policy, prompt: Tensor, answer: Tensor) -> np.ndarray:
    """d log p(answer) / d s_i at s = 1 [C]: gradient x activation summed over positions, i.e. attribution
    patching's first-order estimate of minus the change from zero-ablating component i."""
    scales = torch.ones(1, policy.n_components, device=policy.device, requires_grad=True)
    logp = policy.log_prob(prompt, answer_rollouts(answer, 1), scales)
    (grad,) = torch.autograd.grad(logp.sum(), scales)
    return grad[0].double().cpu().numpy()


def unit_ablation_effects(policy: Policy, prompt: Tensor, answer: Tensor, units: np.ndarray) -> np.ndarray:
    """Activation patching with a zero baseline, one component at a time: p(answer) with the model unchanged
    minus p(answer) with component ``units[j]`` zeroed, for each j [len(units)]."""
    sets = [np.array([], dtype=np.int64)] + [np.array([u]) for u in units]
    p = answer_probability(policy, prompt, answer, ablation_scales(policy.n_components, sets))
    return p[0] - p[1:]
