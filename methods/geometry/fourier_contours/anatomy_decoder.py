"""The anatomy-query decoder: one learned query per anatomical structure reads the slice's feature tokens.

Each layer lets the queries attend to each other (structures constrain each other), then cross-attend to the
encoder's tokens, then pass an MLP (pre-norm transformer decoder layers). The output is one embedding per
structure and slice, from which the contour head reads that structure's Fourier coefficients.
"""

from __future__ import annotations

import torch
from torch import nn


class AnatomyQueryDecoder(nn.Module):
    """``anatomies`` learned queries, ``layers`` transformer decoder layers over the image tokens."""

    def __init__(self, dim: int = 64, anatomies: int = 1, layers: int = 2, heads: int = 4) -> None:
        super().__init__()
        self.queries = nn.Parameter(torch.randn(anatomies, dim) * 0.02)
        self.layers = nn.ModuleList(nn.TransformerDecoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True,
                                                               norm_first=True) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``(N, T, D)`` image tokens -> ``(N, anatomies, D)`` structure embeddings."""
        q = self.queries.unsqueeze(0).expand(tokens.shape[0], -1, -1)
        for layer in self.layers:
            q = layer(q, tokens)
        return self.norm(q)
