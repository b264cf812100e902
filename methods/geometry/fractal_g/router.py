"""The Uncertainty-Aware Fission Router: a dense feature grid becomes a non-uniform graph of quadtree cells.

The grid is tiled by root cells of ``root`` pixels. At each level the router scores the cells still present by
their mean predictive uncertainty (the binary entropy of the backbone's own prediction) and splits (fission) the
most uncertain share of them into four children; the others become nodes. After ``levels`` rounds, or at one
pixel, every cell left is a node. Nodes are therefore dense where the prediction is uncertain, which for a
trained segmenter is along the boundary, and sparse in confident interiors and background.

Each node keeps its image, centre and side in field-of-view units (0..1 on each axis, so the geometry does not
change with the grid's resolution), its physical area (the share of the field of view it covers), its mean
uncertainty and its features (the mean of the grid's features over the cell). ``index`` maps every pixel to the
node that contains it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class NodeGraph:
    """The routed nodes of a batch of images (node ids are global over the batch)."""

    batch: torch.Tensor  # (N,) image of each node
    centre: torch.Tensor  # (N, 2) (y, x) in field-of-view units
    side: torch.Tensor  # (N, 2) (height, width) in field-of-view units
    level: torch.Tensor  # (N,) quadtree depth (0: a root cell)
    uncertainty: torch.Tensor  # (N,) mean predictive uncertainty over the cell
    features: torch.Tensor  # (N, C) mean grid features over the cell
    index: torch.Tensor  # (B, H, W) the node holding each pixel

    @property
    def area(self) -> torch.Tensor:
        """Each node's physical size: the share of the field of view it covers."""
        return self.side[:, 0] * self.side[:, 1]

    @property
    def n_nodes(self) -> int:
        """How many nodes the batch holds."""
        return int(self.batch.numel())

    @property
    def shape(self) -> tuple[int, int]:
        """The (H, W) of the routed grid."""
        return int(self.index.shape[1]), int(self.index.shape[2])


def predictive_uncertainty(logits: torch.Tensor) -> torch.Tensor:
    """Binary entropy of ``sigmoid(logits)``, in bits (0: certain, 1: a coin flip)."""
    p = torch.sigmoid(logits)
    entropy = -(p * torch.log2(p.clamp_min(1e-7)) + (1 - p) * torch.log2((1 - p).clamp_min(1e-7)))
    return entropy.clamp(0.0, 1.0)


class UncertaintyAwareFissionRouter(nn.Module):
    """Splits the most uncertain ``split_fraction`` of the present cells at each level (only cells whose mean
    uncertainty exceeds ``min_uncertainty``), from root cells of ``root`` pixels down to ``root / 2**levels``."""

    def __init__(self, root: int = 8, levels: int = 3, split_fraction: float = 0.3,
                 min_uncertainty: float = 0.05) -> None:
        super().__init__()
        if root < 1 or root & (root - 1) or root >> levels < 1:
            raise ValueError(f"root {root} must be a power of two with at least {levels} halvings")
        self.root, self.levels = root, levels
        self.split_fraction, self.min_uncertainty = split_fraction, min_uncertainty

    def split(self, score: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
        """Which present cells split: per image, the top ``split_fraction`` of present cells by ``score`` that
        are above ``min_uncertainty``."""
        b = score.shape[0]
        flat = torch.where(present, score, torch.full_like(score, -1.0)).reshape(b, -1)
        count = present.reshape(b, -1).sum(1)
        k = torch.ceil(count.float() * self.split_fraction).long().clamp(min=1)
        ranked = flat.sort(dim=1, descending=True).values
        cut = ranked.gather(1, (k - 1).clamp(max=flat.shape[1] - 1)[:, None])
        chosen = (flat >= cut) & (flat > self.min_uncertainty) & (count[:, None] > 0)
        return chosen.reshape(score.shape) & present

    def forward(self, features: torch.Tensor, uncertainty: torch.Tensor) -> NodeGraph:
        """Route ``features`` (B, C, H, W) by ``uncertainty`` (B, 1, H, W) or (B, H, W); H and W must be
        multiples of ``root``."""
        b, c, h, w = features.shape
        if h % self.root or w % self.root:
            raise ValueError(f"grid {h}x{w} is not a multiple of the root cell ({self.root} pixels)")
        u = uncertainty.reshape(b, 1, h, w).to(features.dtype)
        device = features.device
        present = torch.ones(b, h // self.root, w // self.root, dtype=torch.bool, device=device)
        index = torch.full((b, h, w), -1, dtype=torch.long, device=device)
        parts: dict[str, list[torch.Tensor]] = {k: [] for k in ("batch", "centre", "side", "level", "u", "f")}
        offset = 0
        for level in range(self.levels + 1):
            size = self.root >> level
            pooled_u = F.avg_pool2d(u, size)[:, 0] if size > 1 else u[:, 0]
            last = level == self.levels or size == 1
            split = torch.zeros_like(present) if last else self.split(pooled_u, present)
            leaf = present & ~split
            where = leaf.nonzero()  # (n, 3): image, row, col
            n = where.shape[0]
            ids = torch.full(leaf.shape, -1, dtype=torch.long, device=device)
            ids[leaf] = torch.arange(offset, offset + n, device=device)
            up = ids.repeat_interleave(size, 1).repeat_interleave(size, 2)
            index = torch.where(up >= 0, up, index)
            pooled_f = F.avg_pool2d(features, size) if size > 1 else features
            rows, cols = where[:, 1].to(features.dtype), where[:, 2].to(features.dtype)
            parts["batch"].append(where[:, 0])
            parts["centre"].append(torch.stack([(rows + 0.5) * size / h, (cols + 0.5) * size / w], 1))
            parts["side"].append(torch.tensor([size / h, size / w], dtype=features.dtype, device=device).expand(n, 2))
            parts["level"].append(torch.full((n,), level, dtype=torch.long, device=device))
            parts["u"].append(pooled_u[leaf])
            parts["f"].append(pooled_f.permute(0, 2, 3, 1)[leaf])
            offset += n
            if last:
                break
            present = split.repeat_interleave(2, 1).repeat_interleave(2, 2)
        return NodeGraph(batch=torch.cat(parts["batch"]), centre=torch.cat(parts["centre"]),
                         side=torch.cat(parts["side"]), level=torch.cat(parts["level"]),
                         uncertainty=torch.cat(parts["u"]), features=torch.cat(parts["f"]), index=index)

