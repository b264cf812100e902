"""The CNN encoder: a slice image becomes a grid of feature tokens with their 2D positions encoded."""

from __future__ import annotations

import math

import torch
from torch import nn


def conv_block(c_in: int, c_out: int, stride: int = 1) -> nn.Sequential:
    """3x3 convolution (``stride``), group norm, GELU, then a second 3x3 convolution, group norm, GELU."""
    groups = max(1, c_out // 8)
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1), nn.GroupNorm(groups, c_out), nn.GELU(),
                         nn.Conv2d(c_out, c_out, 3, 1, 1), nn.GroupNorm(groups, c_out), nn.GELU())


def sinusoid_2d(height: int, width: int, dim: int, device: torch.device | None = None) -> torch.Tensor:
    """Fixed 2D sine-cosine position encoding ``(height * width, dim)``: half the channels for y, half for x."""
    quarter = dim // 4
    freq = torch.exp(-math.log(100.0) * torch.arange(quarter, device=device) / max(quarter - 1, 1)) * math.pi
    ys = torch.linspace(-1, 1, height, device=device)[:, None].expand(height, width).reshape(-1, 1)
    xs = torch.linspace(-1, 1, width, device=device)[None, :].expand(height, width).reshape(-1, 1)
    enc = torch.cat([torch.sin(ys * freq), torch.cos(ys * freq), torch.sin(xs * freq), torch.cos(xs * freq)], 1)
    return torch.nn.functional.pad(enc, (0, dim - enc.shape[1]))


class CNNEncoder(nn.Module):
    """Convolution blocks, each after the first halving the resolution and doubling the channels, then a 1x1
    projection to ``dim``: an ``H x W`` image gives ``(H / 2^(levels-1)) * (W / 2^(levels-1))`` tokens."""

    def __init__(self, width: int = 16, dim: int = 64, levels: int = 4) -> None:
        super().__init__()
        chans = [width * 2 ** i for i in range(levels)]
        self.blocks = nn.ModuleList([conv_block(1, chans[0])] +
                                    [conv_block(chans[i - 1], chans[i], stride=2) for i in range(1, levels)])
        self.project = nn.Conv2d(chans[-1], dim, 1)
        self.dim = dim

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """``(N, 1, H, W)`` images -> ``(N, tokens, dim)`` features with their position encoding added."""
        x = images
        for block in self.blocks:
            x = block(x)
        x = self.project(x)
        n, d, h, w = x.shape
        return x.flatten(2).transpose(1, 2) + sinusoid_2d(h, w, d, x.device)
