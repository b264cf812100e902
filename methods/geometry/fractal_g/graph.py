"""The Area-Aware Continuous Neighborhood Graph: message passing over the routed cells, weighted by their size.

Neighbours are the cells that touch (sharing an edge or a corner, found on the routed pixel map), plus the node
itself. A message from node j to node i is computed from j's features and the continuous offset between their
centres in field-of-view units (so the same physical layout gives the same messages at any grid resolution).
Node i averages its incoming messages with weights proportional to each neighbour's physical area: the mean is
a quadrature of the feature field over the neighbourhood, where a plain graph would let eight one-pixel cells
outvote the large cell beside them. With every area equal the weights are uniform and the layer is exactly the
plain graph's mean aggregation (``area_aware=False``).
"""

from __future__ import annotations

import torch
from torch import nn

from .router import NodeGraph


def neighbourhood(graph: NodeGraph) -> torch.Tensor:
    """Directed edges (2, E) as (source, target): every ordered pair of distinct nodes whose cells touch
    (8-connectivity on the pixel map), and a self-loop on each node; sorted by target, then source."""
    index = graph.index
    pairs = [(index[:, :, :-1], index[:, :, 1:]), (index[:, :-1, :], index[:, 1:, :]),
             (index[:, :-1, :-1], index[:, 1:, 1:]), (index[:, :-1, 1:], index[:, 1:, :-1])]
    src = torch.cat([a.reshape(-1) for a, _ in pairs] + [b.reshape(-1) for _, b in pairs])
    dst = torch.cat([b.reshape(-1) for _, b in pairs] + [a.reshape(-1) for a, _ in pairs])
    keep = src != dst
    n = graph.n_nodes
    loops = torch.arange(n, device=index.device)
    key = torch.cat([dst[keep] * n + src[keep], loops * n + loops]).unique()
    return torch.stack([key % n, key // n])


def aggregate(values: torch.Tensor, edges: torch.Tensor, weights: torch.Tensor, n_nodes: int) -> torch.Tensor:
    """Per target node, the ``weights``-weighted mean of ``values`` (one row per edge) over its incoming edges."""
    target = edges[1]
    total = torch.zeros(n_nodes, dtype=weights.dtype, device=weights.device).index_add_(0, target, weights)
    summed = torch.zeros(n_nodes, values.shape[1], dtype=values.dtype, device=values.device)
    summed.index_add_(0, target, values * weights[:, None])
    return summed / total.clamp_min(torch.finfo(total.dtype).tiny)[:, None]


class AreaAwareMessagePassing(nn.Module):
    """One round of message passing on the neighbourhood graph, residual: ``h + update([h, mean message])``.

    The message from j to i is ``GELU(W [h_j, (c_j - c_i) * position_scale])``; the mean over i's neighbours is
    weighted by each neighbour's area (``area_aware``) or uniform (the plain graph)."""

    def __init__(self, dim: int, position_scale: float = 8.0, area_aware: bool = True) -> None:
        super().__init__()
        self.position_scale, self.area_aware = position_scale, area_aware
        self.message = nn.Sequential(nn.Linear(dim + 2, dim), nn.GELU())
        self.update = nn.Sequential(nn.Linear(2 * dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.norm = nn.LayerNorm(dim)

    def weights(self, graph: NodeGraph, edges: torch.Tensor) -> torch.Tensor:
        """The aggregation weight of each edge before normalisation: the source's area, or 1."""
        if self.area_aware:
            return graph.area[edges[0]]
        return torch.ones(edges.shape[1], dtype=graph.area.dtype, device=graph.area.device)

    def forward(self, h: torch.Tensor, graph: NodeGraph, edges: torch.Tensor) -> torch.Tensor:
        """The node features after one round."""
        src, dst = edges
        offset = (graph.centre[src] - graph.centre[dst]) * self.position_scale
        messages = self.message(torch.cat([h[src], offset], 1))
        mean = aggregate(messages, edges, self.weights(graph, edges), graph.n_nodes)
        return h + self.update(torch.cat([self.norm(h), mean], 1))
