"""Fourier Contour Learning's network: CNN encoder -> anatomy-query decoder -> cross-slice attention -> contour
head giving each structure's centre and ``K`` harmonics of elliptic Fourier coefficients per slice.

Coordinates are normalised by half the field of view. Each structure's centre is a reference point -- the
average position of the image tokens weighted by the structure's attention over them (as DETR-style decoders
locate objects) -- plus the head's offset. The head starts at a centred circle of radius 0.3 (the
canonical parameterisation of a circle: ``a_1 = d_1 = r``), so the first steps already have positive areas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .anatomy_decoder import AnatomyQueryDecoder
from .cross_slice import CrossSliceAttention
from .encoder import CNNEncoder


@dataclass(frozen=True)
class FCLConfig:
    """Sizes of the network: encoder width and levels, embedding size, harmonics, structures, layers."""

    width: int = 16
    dim: int = 64
    levels: int = 4
    harmonics: int = 8
    anatomies: int = 1
    decoder_layers: int = 2
    slice_layers: int = 1
    heads: int = 4
    cross_slice: bool = True


class FourierContourNet(nn.Module):
    """Per-slice Fourier contours of ``anatomies`` structures for whole stacks of slices."""

    def __init__(self, cfg: FCLConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoder = CNNEncoder(cfg.width, cfg.dim, cfg.levels)
        self.decoder = AnatomyQueryDecoder(cfg.dim, cfg.anatomies, cfg.decoder_layers, cfg.heads)
        self.cross_slice = CrossSliceAttention(cfg.dim, cfg.slice_layers, cfg.heads) if cfg.cross_slice else None
        self.locate_query, self.locate_key = nn.Linear(cfg.dim, cfg.dim), nn.Linear(cfg.dim, cfg.dim)
        self.head = nn.Linear(cfg.dim, 2 + 4 * cfg.harmonics)
        nn.init.normal_(self.head.weight, std=1e-3)
        with torch.no_grad():
            bias = torch.zeros(2 + 4 * cfg.harmonics)
            bias[2], bias[5] = 0.3, 0.3  # a_1 and d_1 of the first harmonic
            self.head.bias.copy_(bias)

    @property
    def outputs_per_slice(self) -> int:
        """How many numbers the network outputs per slice: the contours' centres and coefficients."""
        return self.cfg.anatomies * (2 + 4 * self.cfg.harmonics)

    def forward(self, images: torch.Tensor, depth: torch.Tensor,
                valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``images (B, S, H, W)``, ``depth (B, S)`` mm, ``valid (B, S)`` -> centres ``(B, S, A, 2)`` and
        coefficients ``(B, S, A, K, 4)`` (padded slices get finite values that nothing should read)."""
        b, s = valid.shape
        tokens = self.encoder(images[valid].unsqueeze(1))
        per_slice = self.decoder(tokens)
        ref = self.reference_points(per_slice, tokens, images.shape[-1])
        x = per_slice.new_zeros(b, s, *per_slice.shape[1:])
        x[valid] = per_slice
        reference = ref.new_zeros(b, s, *ref.shape[1:])
        reference[valid] = ref
        if self.cross_slice is not None:
            x = self.cross_slice(x, depth, valid)
        out = self.head(x)
        return reference + out[..., :2], out[..., 2:].unflatten(-1, (self.cfg.harmonics, 4))

    def reference_points(self, queries: torch.Tensor, tokens: torch.Tensor, size: int) -> torch.Tensor:
        """``(N, A, 2)``: each structure's attention-weighted mean of the token centres (normalised x, y)."""
        side = size // 2 ** (self.cfg.levels - 1)
        ticks = (2 * torch.arange(side, device=tokens.device, dtype=tokens.dtype) + 1) / side - 1
        ys, xs = torch.meshgrid(ticks, ticks, indexing="ij")
        xy = torch.stack([xs.reshape(-1), ys.reshape(-1)], -1)  # token order: row-major, as the encoder's
        logits = self.locate_query(queries) @ self.locate_key(tokens).transpose(1, 2) / math.sqrt(self.cfg.dim)
        return logits.softmax(-1) @ xy
