"""The dense baseline: a small 2D U-Net giving one logit per pixel (the cavity), trained on masks alone or, as
a stronger variant, also on measured volumes through its soft area (``Σ sigmoid × pixel area``)."""

from __future__ import annotations

import torch
from torch import nn

from .encoder import conv_block


class UNet(nn.Module):
    """Encoder of ``levels`` conv blocks (halving resolution, doubling channels), mirrored decoder with skip
    concatenations, a 1x1 convolution to one logit per pixel."""

    def __init__(self, width: int = 16, levels: int = 4) -> None:
        super().__init__()
        chans = [width * 2 ** i for i in range(levels)]
        self.down = nn.ModuleList([conv_block(1, chans[0])] +
                                  [conv_block(chans[i - 1], chans[i], stride=2) for i in range(1, levels)])
        self.up = nn.ModuleList(nn.ConvTranspose2d(chans[i], chans[i - 1], 2, 2) for i in range(levels - 1, 0, -1))
        self.merge = nn.ModuleList(conv_block(2 * chans[i - 1], chans[i - 1]) for i in range(levels - 1, 0, -1))
        self.out = nn.Conv2d(chans[0], 1, 1)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """``(N, 1, H, W)`` images (H, W divisible by ``2^(levels-1)``) -> ``(N, H, W)`` logits."""
        skips, x = [], images
        for block in self.down:
            x = block(x)
            skips.append(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips[:-1]), strict=True):
            x = merge(torch.cat([up(x), skip], 1))
        return self.out(x).squeeze(1)


def outputs_per_slice(size: int) -> int:
    """Numbers the U-Net outputs per slice: one logit per pixel."""
    return size * size
