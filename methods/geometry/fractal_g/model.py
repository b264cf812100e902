"""Fractal-G plugged on the U-Net, and the segmenter that runs either arm on images of any size.

The plug-in reads the backbone's last features and logits: the Uncertainty-Aware Fission Router turns the grid
into nodes (dense where the backbone is uncertain), the node features (the mean features of each cell, its mean
uncertainty and log-area) are embedded and passed through rounds of Area-Aware message passing, and the
Topology-Aware Implicit Renderer returns them to the grid as a field; a 1x1 head reads the backbone's features
beside the field and corrects the backbone's logits (a residual, so the plain U-Net is the plug-in at zero).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .graph import AreaAwareMessagePassing, neighbourhood
from .renderer import TopologyAwareImplicitRenderer
from .router import NodeGraph, UncertaintyAwareFissionRouter, predictive_uncertainty
from .unet import DEPTH, UNet


@dataclass(frozen=True)
class ModelConfig:
    """The sizes of both arms (the backbone's are shared) and Fractal-G's own settings."""

    base: int = 16  # U-Net width
    dim: int = 32  # node feature width
    rounds: int = 2  # message-passing rounds
    root: int = 8  # root cell, pixels
    levels: int = 3  # fission levels (finest cell: root / 2**levels pixels)
    split_fraction: float = 0.3
    neighbours: int = 12  # nodes blended per rendered point

    def dict(self) -> dict[str, float]:
        """The settings as a plain dict (stored in the checkpoint)."""
        return asdict(self)


class FractalG(nn.Module):
    """The plug-in: ``forward(features, logits) -> refined logits`` (same shapes as the backbone's)."""

    def __init__(self, channels: int, config: ModelConfig) -> None:
        super().__init__()
        self.router = UncertaintyAwareFissionRouter(config.root, config.levels, config.split_fraction)
        self.embed = nn.Sequential(nn.Linear(channels + 2, config.dim), nn.GELU(), nn.Linear(config.dim, config.dim))
        self.rounds = nn.ModuleList([AreaAwareMessagePassing(config.dim) for _ in range(config.rounds)])
        self.renderer = TopologyAwareImplicitRenderer(config.dim, config.neighbours)
        self.head = nn.Sequential(nn.Conv2d(channels + config.dim, channels, 1), nn.GELU(),
                                  nn.Conv2d(channels, 1, 1))
        nn.init.zeros_(self.head[-1].weight)
        nn.init.zeros_(self.head[-1].bias)
        self.last_graph: NodeGraph | None = None

    def forward(self, features: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        """Refined logits: the backbone's plus the head's reading of its features beside the rendered field."""
        graph = self.router(features, predictive_uncertainty(logits.detach()))
        self.last_graph = graph
        edges = neighbourhood(graph)
        h = self.embed(torch.cat([graph.features, graph.uncertainty[:, None],
                                  torch.log(graph.area)[:, None] / 10], 1))
        for layer in self.rounds:
            h = layer(h, graph, edges)
        field = self.renderer(h, graph, edges)
        return logits + self.head(torch.cat([features, field], 1))


class Segmenter(nn.Module):
    """A U-Net, with Fractal-G on it or not (``fractal_g``); ``forward(x) -> (logits, backbone logits)`` for
    images (B, C, H, W) of any size (reflect-padded to the backbone's and the router's multiple, then cropped)."""

    def __init__(self, config: ModelConfig, fractal_g: bool, in_channels: int = 1) -> None:
        super().__init__()
        self.config = config
        self.backbone = UNet(in_channels, config.base)
        self.plugin = FractalG(config.base, config) if fractal_g else None
        self.multiple = max(2 ** DEPTH, config.root)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The final logits and the backbone's own (the same tensor for the plain U-Net)."""
        h, w = x.shape[-2:]
        ph, pw = -h % self.multiple, -w % self.multiple
        if ph or pw:
            x = F.pad(x, (0, pw, 0, ph), mode="reflect" if min(h, w) > max(ph, pw) else "replicate")
        features, logits = self.backbone(x)
        out = self.plugin(features, logits) if self.plugin is not None else logits
        return out[..., :h, :w], logits[..., :h, :w]

    @torch.no_grad()
    def predict(self, image: torch.Tensor) -> torch.Tensor:
        """The boolean mask of one image (H, W) or (C, H, W)."""
        x = image[None, None] if image.ndim == 2 else image[None]
        return self(x)[0][0, 0] > 0
