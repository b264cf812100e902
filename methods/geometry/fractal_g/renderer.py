"""The Topology-Aware Implicit Renderer: the graph's node features become a continuous field on the grid.

The field is an implicit function of a continuous point ``q`` (field-of-view units): the node whose cell holds
``q`` and its graph neighbours (never other nodes, however close: the interpolation follows the graph's topology)
are blended with inverse-square-distance (Shepard) weights, each neighbour's weight gated by a learned affinity
between it and the containing node, so the field need not blend across a boundary the features separate. At a
node's centre its own weight dominates, so the field returns the node's features there. Reading the field at the
pixel centres of any grid over the same field of view renders it back to that grid (the routed one or another).
"""

from __future__ import annotations

import torch
from torch import nn

from .router import NodeGraph

EPS = 1e-12  # added to squared distances (field-of-view units): a node's own weight at its centre is 1e12


def neighbour_table(graph: NodeGraph, edges: torch.Tensor, k: int) -> torch.Tensor:
    """(N, k) for each node, itself and its nearest ``k - 1`` graph neighbours by centre distance; -1 pads."""
    src, dst = edges
    distance = (graph.centre[src] - graph.centre[dst]).square().sum(1)
    order = distance.sort(stable=True).indices
    order = order[dst[order].sort(stable=True).indices]  # grouped by target, nearest (itself) first
    src, dst = src[order], dst[order]
    starts = torch.zeros(graph.n_nodes + 1, dtype=torch.long, device=src.device)
    starts[1:] = torch.bincount(dst, minlength=graph.n_nodes).cumsum(0)
    rank = torch.arange(dst.numel(), device=src.device) - starts[dst]
    keep = rank < k
    table = torch.full((graph.n_nodes, k), -1, dtype=torch.long, device=src.device)
    table[dst[keep], rank[keep]] = src[keep]
    return table


def pixel_centres(h: int, w: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """(h * w, 2) the (y, x) pixel centres of an ``h`` x ``w`` grid over the field of view, row-major."""
    ys = (torch.arange(h, device=device, dtype=torch.float32) + 0.5) / h
    xs = (torch.arange(w, device=device, dtype=torch.float32) + 0.5) / w
    return torch.stack(torch.meshgrid(ys, xs, indexing="ij"), -1).reshape(-1, 2)


class TopologyAwareImplicitRenderer(nn.Module):
    """Renders node features (N, D) as a field at query points or on a grid; ``neighbours`` bounds the
    nodes blended at a point (the containing node and its nearest graph neighbours)."""

    def __init__(self, dim: int, neighbours: int = 12, gated: bool = True) -> None:
        super().__init__()
        self.neighbours = neighbours
        self.affinity = nn.Sequential(nn.Linear(2 * dim, dim), nn.GELU(), nn.Linear(dim, 1)) if gated else None

    def containing(self, graph: NodeGraph, image: torch.Tensor, points: torch.Tensor) -> torch.Tensor:
        """The node whose cell holds each point (``image`` its image index, ``points`` (Q, 2) in [0, 1])."""
        h, w = graph.shape
        row = (points[:, 0] * h).floor().long().clamp(0, h - 1)
        col = (points[:, 1] * w).floor().long().clamp(0, w - 1)
        return graph.index[image, row, col]

    def gates(self, h: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        """(N, K) the learned affinity in (0, 1) of each node with each node of its table (1 when ungated)."""
        if self.affinity is None:
            return torch.ones(table.shape, dtype=h.dtype, device=h.device)
        safe = table.clamp_min(0)
        pairs = torch.cat([h[:, None, :].expand(-1, table.shape[1], -1), h[safe]], -1)
        return torch.sigmoid(self.affinity(pairs)[..., 0])

    def query(self, h: torch.Tensor, graph: NodeGraph, edges: torch.Tensor, image: torch.Tensor,
              points: torch.Tensor) -> torch.Tensor:
        """The field (Q, D) at ``points`` (Q, 2) of images ``image`` (Q,)."""
        table = neighbour_table(graph, edges, self.neighbours)
        gate = self.gates(h, table)
        home = self.containing(graph, image, points)
        candidates = table[home]  # (Q, K)
        safe = candidates.clamp_min(0)
        d2 = (points[:, None, :] - graph.centre[safe]).square().sum(-1)
        weight = torch.where(candidates >= 0, gate[home] / (d2 + EPS), torch.zeros_like(d2))
        weight = weight / weight.sum(1, keepdim=True)
        return (weight[..., None] * h[safe]).sum(1)

    def forward(self, h: torch.Tensor, graph: NodeGraph, edges: torch.Tensor,
                size: tuple[int, int] | None = None) -> torch.Tensor:
        """The field (B, D, H', W') at the pixel centres of a ``size`` grid (default: the routed grid)."""
        b = graph.index.shape[0]
        hh, ww = size or graph.shape
        points = pixel_centres(hh, ww, h.device).to(h.dtype)
        image = torch.arange(b, device=h.device).repeat_interleave(points.shape[0])
        field = self.query(h, graph, edges, image, points.repeat(b, 1))
        return field.reshape(b, hh, ww, -1).permute(0, 3, 1, 2)
