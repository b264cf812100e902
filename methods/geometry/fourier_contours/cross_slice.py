"""Cross-slice attention: the slices of one stack exchange their structure embeddings.

A slice alone cannot tell how the cavity continues above and below it; attention across the stack's slices
(per structure, keys masked where a stack has fewer slices) lets each slice's contour agree with its neighbours.
Slice positions (depth below the base, mm) enter as a sinusoidal encoding added to the embeddings, so the block
is permutation-equivariant over slices: permuting the slices together with their positions permutes the output,
and padded slices never change a real slice's output.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def depth_encoding(depth: torch.Tensor, dim: int, scale: float = 100.0) -> torch.Tensor:
    """Sinusoidal encoding ``(..., dim)`` of slice depths (mm), wavelengths up to ``2π scale``."""
    half = dim // 2
    freq = torch.exp(-math.log(50.0) * torch.arange(half, device=depth.device) / max(half - 1, 1)) / scale
    angle = depth.unsqueeze(-1) * freq * 2 * math.pi
    return torch.nn.functional.pad(torch.cat([torch.sin(angle), torch.cos(angle)], -1), (0, dim - 2 * half))


class CrossSliceAttention(nn.Module):
    """``layers`` pre-norm transformer encoder layers over the slice axis, one sequence per stack and structure."""

    def __init__(self, dim: int = 64, layers: int = 1, heads: int = 4) -> None:
        super().__init__()
        self.position = nn.Linear(dim, dim)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True,
                                                               norm_first=True) for _ in range(layers))

    def forward(self, x: torch.Tensor, depth: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """``x (B, S, A, D)`` per-slice structure embeddings, ``depth (B, S)`` mm, ``valid (B, S)`` -> same shape."""
        b, s, a, d = x.shape
        h = x + self.position(depth_encoding(depth, d)).unsqueeze(2)
        h = h.permute(0, 2, 1, 3).reshape(b * a, s, d)
        pad = (~valid).repeat_interleave(a, dim=0)
        for layer in self.layers:
            h = layer(h, src_key_padding_mask=pad)
        return h.reshape(b, a, s, d).permute(0, 2, 1, 3)
