"""Unlearning losses on tokenised batches (labels = -100 on prompt and padding).

- gradient ascent:     L = -NLL(forget)
- gradient difference: L = -NLL(forget) + w * NLL(retain)
- NPO (Zhang et al., 2024): L = -(2/beta) * mean log sigmoid(-beta * (log p(y|x) - log p_orig(y|x))) on the
  forget set (+ w * NLL(retain) when w > 0), where log p is summed over the answer tokens and p_orig is the model
  before unlearning. It equals (2/beta) * mean log(1 + (p/p_orig)^beta): bounded below, unlike gradient ascent.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def nll(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean negative log-likelihood per answer token."""
    return model(**batch).loss


def sequence_logprob(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """log p(answer | prompt) per sequence, summed over answer tokens: shape [batch]."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1]
    labels = batch["labels"][:, 1:]
    mask = labels != -100
    token_logp = torch.gather(F.log_softmax(logits.float(), dim=-1), 2, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (token_logp * mask).sum(-1)


def gradient_ascent(model, forget: dict[str, torch.Tensor]) -> torch.Tensor:
    return -nll(model, forget)


def gradient_difference(model, forget: dict[str, torch.Tensor], retain: dict[str, torch.Tensor],
                        retain_weight: float = 1.0) -> torch.Tensor:
    return -nll(model, forget) + retain_weight * nll(model, retain)


def npo(model, forget: dict[str, torch.Tensor], original_logprob: torch.Tensor, beta: float = 0.1,
        retain: dict[str, torch.Tensor] | None = None, retain_weight: float = 0.0) -> torch.Tensor:
    log_ratio = sequence_logprob(model, forget) - original_logprob
    loss = -(2.0 / beta) * F.logsigmoid(-beta * log_ratio).mean()
    if retain is not None and retain_weight > 0:
        loss = loss + retain_weight * nll(model, retain)
    return loss
