"""Baseline attributions on the log-probability of a reference answer, all from one batched pass per prompt.

- activation: mean |a_i| over the prompt and reference tokens (unmodified model);
- grad_x_act: d log p(answer) / d s_i at s = 1, i.e. sum over positions of a_i * d log p / d a_i
  (attribution patching: minus the first-order estimate of zero-ablating component i);
- integrated_gradients: the midpoint Riemann sum of that gradient along s = alpha 1, alpha in (0, 1).

Also returns the mean activation of each component, used for mean ablation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from .estimator import midpoints
from .policy import LMPolicy, Rollouts


def answer_attributions(policy: LMPolicy, prompts: Sequence[Tensor], references: Sequence[Tensor], steps: int,
                        progress: Callable[[int], None] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``({"activation", "grad_x_act", "integrated_gradients"} -> [C], mean activation [C])``, averaged over prompts.

    Row 0 of each batch is the unmodified model, rows 1..steps the points of the integrated-gradients path.
    Log-probabilities are the model's own (temperature 1).
    """
    C = policy.n_components
    alphas = torch.tensor(np.concatenate([[1.0], midpoints(steps)]), dtype=torch.float32)
    gxa, ig, magnitude, mean, tokens = np.zeros(C), np.zeros(C), np.zeros(C), np.zeros(C), 0
    for prompt, ref in zip(prompts, references, strict=True):
        ref = ref.to(policy.device)
        rollouts = Rollouts(ref[None].expand(len(alphas), -1), torch.ones(len(alphas), len(ref), dtype=torch.bool))
        scales = alphas.to(policy.device)[:, None].repeat(1, C).requires_grad_(True)
        record: dict[str, Tensor] = {}
        logp = policy.log_prob(prompt, rollouts, scales, temperature=1.0, record=record)
        logp.sum().backward()
        grad = scales.grad.double().cpu().numpy()
        gxa += grad[0]
        ig += grad[1:].mean(0)
        acts = torch.cat([record[site.name][0].reshape(-1, site.size) for site in policy.sites], 1).double().cpu()
        magnitude += acts.abs().sum(0).numpy()
        mean += acts.sum(0).numpy()
        tokens += acts.shape[0]
        if progress is not None:
            progress(1)
    P = len(prompts)
    return ({"activation": magnitude / tokens, "grad_x_act": gxa / P, "integrated_gradients": ig / P},
            mean / tokens)
