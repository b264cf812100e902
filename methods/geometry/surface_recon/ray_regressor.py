"""The cross-attention ray regressor: a continuous coarse surface, one depth per ray, from the ray's context
surfels (:mod:`.rays`).

A ray's query vector (a learnt embedding plus its own features) attends over its context tokens (multi-head
cross-attention); the attended state then weighs the tokens once more, and the depth is the weighted mean of the
tokens' depths (the *anchor*) plus a bounded residual scaled by their weighted spread::

    t = sum_j a_j t_j + spread * 2 tanh(head(h)),   spread = sqrt(sum_j a_j (t_j - anchor)^2)

So where the prior's surfels agree along a ray the surface passes exactly through them, whatever the weights;
where they disagree the network chooses among them and corrects within their spread. Any ray can be asked
(its context is gathered from the pixels around it): the surface is continuous, not a fixed grid.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from .rays import FEATURES, RAY_FEATURES


@dataclass(frozen=True)
class RegressorConfig:
    """Widths of the ray regressor."""

    dim: int = 32
    heads: int = 4

    def dict(self) -> dict[str, int]:
        """As a plain dict (for checkpoints)."""
        return asdict(self)


def _mlp(n_in: int, dim: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, dim), nn.GELU(), nn.Linear(dim, dim))


class RayRegressor(nn.Module):
    """Depth along each ray from cross-attention over its context tokens."""

    def __init__(self, config: RegressorConfig = RegressorConfig()) -> None:
        super().__init__()
        self.config = config
        self.tokens = _mlp(len(FEATURES), config.dim)
        self.ray = _mlp(len(RAY_FEATURES), config.dim)
        self.query = nn.Parameter(torch.zeros(config.dim))
        self.attention = nn.MultiheadAttention(config.dim, config.heads, batch_first=True)
        self.mix = _mlp(config.dim, config.dim)
        self.weigh = nn.Linear(config.dim, config.dim)
        self.head = nn.Linear(config.dim, 1)

    def forward(self, features: torch.Tensor, ray_features: torch.Tensor, depths: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        """Depths ``(R,)`` of rays with tokens ``features`` ``(R, T, F)``, ``depths`` ``(R, T)``, ``mask``
        ``(R, T)`` (True: a token) and ``ray_features`` ``(R, G)``; every ray needs one token at least."""
        keys = self.tokens(features)
        query = (self.query + self.ray(ray_features))[:, None]
        attended, _ = self.attention(query, keys, keys, key_padding_mask=~mask, need_weights=False)
        state = attended[:, 0] + query[:, 0]
        state = state + self.mix(state)
        logits = (self.weigh(keys) * state[:, None]).sum(-1) / self.config.dim ** 0.5
        weights = torch.softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)
        anchor = (weights * depths).sum(-1)
        spread = torch.sqrt((weights * (depths - anchor[:, None]) ** 2).sum(-1) + 1e-12)
        return anchor + spread * 2 * torch.tanh(self.head(state)[:, 0])


def predict(model: RayRegressor, arrays: dict, device: torch.device, batch: int = 4096) -> torch.Tensor:
    """The model's depths for a context's arrays (:func:`.rays.concatenate`), in batches, on the CPU."""
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(arrays["mask"]), batch):
            part = {k: torch.as_tensor(v[start:start + batch], device=device) for k, v in arrays.items()}
            out.append(model(part["features"], part["ray_features"], part["depths"], part["mask"]).cpu())
    return torch.cat(out) if out else torch.zeros(0)
