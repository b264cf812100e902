"""The Integrated Policy Gradient estimator.

    IPG_i = integral_0^1 d/ds_i E_{tau ~ pi_s}[R(tau)] |_{s = alpha 1} d alpha

Midpoint Riemann sum over ``steps`` values of alpha; at each alpha, ``samples`` trajectories from the
scaled policy and the score-function estimator with a leave-one-out baseline,

    g(alpha) = 1/(N-1) sum_n (R_n - mean R) grad_s log pi_s(tau_n),

which is unbiased for the policy gradient. All steps and samples of a prompt are sampled together in
batches of ``batch_rows`` rows (each row with its own alpha), and the gradients of all rows come from
batched forward+backward passes of ``sum_n coef_n log pi(tau_n)`` with respect to per-row multipliers
(row n's gradient is its own term, which also gives the Monte-Carlo standard error). Rows whose
coefficient is zero (every sample of that alpha scored the same) need no backward pass and get none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from .policy import Policy, Rollouts

Score = Callable[[Any, Any], float]  # (output, answer) -> outcome


@dataclass
class IPGResult:
    """Attributions of one path (the components scaled together from 0 to 1)."""

    ipg: np.ndarray  # [C]
    stderr: np.ndarray  # [C] Monte-Carlo standard error
    stderr_total: float  # standard error of ipg.sum()
    alphas: np.ndarray  # [M]
    outcome: np.ndarray  # [M] mean outcome at each alpha (over prompts and samples)
    j0: float | None  # mean outcome with every component at 0, when endpoints were sampled
    j1: float | None  # ... and at 1 (the unmodified model)
    steps: int
    samples: int
    prompts: int

    @property
    def completeness_gap(self) -> float | None:
        """sum_i IPG_i - (J(1) - J(0)); near zero up to Monte-Carlo and Riemann error."""
        return None if self.j0 is None else float(self.ipg.sum() - (self.j1 - self.j0))


def midpoints(steps: int) -> np.ndarray:
    return (np.arange(steps) + 0.5) / steps


def sample_rows(policy: Policy, prompt: Any, row_alphas: Tensor, generator: torch.Generator,
                batch_rows: int) -> Rollouts:
    """Trajectories for rows scaled by ``row_alphas`` (every component of row n at alpha_n), independent rows."""
    uniforms = torch.rand(len(row_alphas), policy.horizon, generator=generator)
    parts = []
    for start in range(0, len(row_alphas), batch_rows):
        alphas = row_alphas[start:start + batch_rows].to(policy.device)
        scales = alphas[:, None].expand(-1, policy.n_components)
        parts.append(policy.sample(prompt, scales, uniforms[start:start + batch_rows]))
    return Rollouts.cat(parts)


def row_gradients(policy: Policy, prompt: Any, rollouts: Rollouts, row_alphas: Tensor, coefs: Tensor,
                  batch_rows: int) -> Tensor:
    """[B, C]: coef_n * grad_s log pi_s(tau_n) at s = alpha_n 1, for each row; zero rows skip the passes."""
    grads = torch.zeros(len(rollouts), policy.n_components, dtype=torch.float64)
    rows = torch.nonzero(coefs != 0).squeeze(1)
    for start in range(0, len(rows), batch_rows):
        chunk = rows[start:start + batch_rows]
        scales = row_alphas[chunk].to(policy.device, torch.float32)[:, None].repeat(1, policy.n_components)
        scales.requires_grad_(True)
        logp = policy.log_prob(prompt, rollouts[chunk], scales)
        (logp * coefs[chunk].to(logp)).sum().backward()
        grads[chunk] = scales.grad.double().cpu()
    return grads


def estimate_ipg(policy: Policy, prompts: Sequence[Any], answers: Sequence[Any], score: Score, steps: int,
                 samples: int, batch_rows: int = 64, seed: int = 0, endpoints: bool = False,
                 progress: Callable[[int], None] | None = None) -> IPGResult:
    """IPG of every component of ``policy`` for the expected ``score`` over ``prompts``.

    ``endpoints`` also samples ``samples`` trajectories at alpha = 0 and 1 per prompt, for the
    completeness check sum_i IPG_i = J(1) - J(0). ``progress`` is called with 1 after each prompt.
    """
    if steps < 1 or samples < 2:
        raise ValueError(f"need steps >= 1 and samples >= 2 (leave-one-out baseline); got {steps}, {samples}")
    if len(prompts) != len(answers) or not prompts:
        raise ValueError("need one answer per prompt, and at least one prompt")
    M, N, C, P = steps, samples, policy.n_components, len(prompts)
    alphas = midpoints(M)
    row_alphas = torch.tensor(np.repeat(alphas, N), dtype=torch.float32)
    if endpoints:
        row_alphas = torch.cat([row_alphas, torch.zeros(N), torch.ones(N)])
    grad_sum = np.zeros(C)
    var_sum = np.zeros(C)
    var_total = 0.0
    outcome = np.zeros(M)
    ends = np.zeros(2)
    for p, (prompt, answer) in enumerate(zip(prompts, answers, strict=True)):
        generator = torch.Generator().manual_seed(seed * 1_000_003 + p)
        rollouts = sample_rows(policy, prompt, row_alphas, generator, batch_rows)
        rewards = torch.tensor([float(score(out, answer)) for out in policy.outputs(rollouts)], dtype=torch.float64)
        R = rewards[:M * N].view(M, N)
        outcome += R.mean(1).numpy()
        if endpoints:
            ends += rewards[M * N:].view(2, N).mean(1).numpy()
        coefs = torch.zeros(len(rewards), dtype=torch.float64)
        coefs[:M * N] = ((R - R.mean(1, keepdim=True)) / (N - 1)).reshape(-1)
        grads = row_gradients(policy, prompt, rollouts, row_alphas, coefs, batch_rows)
        y = N * grads[:M * N].view(M, N, C)  # per-sample terms whose mean over n is g(alpha_m)
        grad_sum += y.mean(1).sum(0).numpy()
        var_sum += (y.var(1) / N).sum(0).numpy()
        var_total += float((y.sum(2).var(1) / N).sum())
        if progress is not None:
            progress(1)
    return IPGResult(
        ipg=grad_sum / (M * P), stderr=np.sqrt(var_sum) / (M * P), stderr_total=float(np.sqrt(var_total)) / (M * P),
        alphas=alphas, outcome=outcome / P, j0=float(ends[0] / P) if endpoints else None,
        j1=float(ends[1] / P) if endpoints else None, steps=M, samples=N, prompts=P,
    )
