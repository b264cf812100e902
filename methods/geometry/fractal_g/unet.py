"""The backbone: a small U-Net (GroupNorm, three poolings) whose last decoder features feed a 1x1 head.

Both arms of every comparison use this same network; Fractal-G (:mod:`.model`) is plugged on top of its last
features and its logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

DEPTH = 3  # poolings: inputs are padded to a multiple of 2**DEPTH


def _block(c_in: int, c_out: int) -> nn.Sequential:
    groups = 4 if c_out % 4 == 0 else 1
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.GroupNorm(groups, c_out), nn.GELU(),
                         nn.Conv2d(c_out, c_out, 3, padding=1), nn.GroupNorm(groups, c_out), nn.GELU())


class UNet(nn.Module):
    """``forward(x) -> (features, logits)``: decoder features (B, base, H, W) and the head's logits (B, 1, H, W);
    H and W multiples of ``2**DEPTH``."""

    def __init__(self, in_channels: int = 1, base: int = 16) -> None:
        super().__init__()
        widths = [base * 2 ** i for i in range(DEPTH + 1)]
        self.down = nn.ModuleList([_block(in_channels, widths[0])] +
                                  [_block(widths[i], widths[i + 1]) for i in range(DEPTH)])
        self.up = nn.ModuleList([_block(widths[i + 1] + widths[i], widths[i]) for i in reversed(range(DEPTH))])
        self.head = nn.Conv2d(base, 1, 1)
        self.channels = base

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Decoder features and logits of ``x`` (B, in_channels, H, W)."""
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for block in self.up:
            skip = skips.pop()
            x = block(torch.cat([F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False),
                                 skip], 1))
        return x, self.head(x)
