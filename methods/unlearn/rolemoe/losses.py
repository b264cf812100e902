"""RoleMoE's two auxiliary losses, on the gates of a batch and on the experts' weights.

Specialization (different roles use different expert distributions). With gates ``g_i`` (a distribution over
the ``E`` experts for example ``i``, of role ``r_i``), role shares ``pi_r = n_r / n``, role routing
``q_r = mean_{i: r_i = r} g_i`` and overall routing ``m = sum_r pi_r q_r``::

    I(R; E) = H(m) - sum_r pi_r H(q_r)           (nats; 0 <= I <= min(H(R), log E))
    L_spec  = -I(R; E)

Maximising the mutual information wants every role concentrated on its experts (low H(q_r)) and all experts in
use (high H(m)), which also rules out the collapse of all roles onto one expert.

Disentanglement (different experts span different subspaces). Expert ``e`` of a layer is ``B_e A_e`` (``A_e``:
r x in, the directions it reads; ``B_e``: out x r, the directions it writes). With the rows of ``A_e`` and the
columns of ``B_e`` scaled to unit length (written ``^``)::

    O_A(e, f) = ||A^_e A^_f^T||_F^2 / r^2          mean squared cosine between the read directions of e and f
    O_B(e, f) = ||B^_e^T B^_f||_F^2 / r^2          the same for the write directions
    L_dis     = mean over layers and pairs e < f of (O_A + O_B) / 2     (0: orthogonal subspaces, 1: identical)
"""

from __future__ import annotations

import torch

EPS = 1e-12


def entropy(p: torch.Tensor) -> torch.Tensor:
    """Shannon entropy (nats) of distributions along the last axis."""
    return -(p * torch.log(p.clamp_min(EPS))).sum(-1)


def role_routing(gates: torch.Tensor, roles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(pi, q): the share of each role present in the batch [k] and its mean gates [k, E]."""
    present, index = torch.unique(roles, return_inverse=True)
    counts = torch.zeros(len(present), dtype=gates.dtype, device=gates.device).index_add_(
        0, index, torch.ones_like(index, dtype=gates.dtype))
    sums = torch.zeros(len(present), gates.shape[1], dtype=gates.dtype, device=gates.device).index_add_(0, index,
                                                                                                         gates)
    return counts / counts.sum(), sums / counts[:, None]


def mutual_information(gates: torch.Tensor, roles: torch.Tensor) -> torch.Tensor:
    """I(R; E) of a batch: gates [n, E] (rows sum to 1), roles [n] (integer ids)."""
    pi, q = role_routing(gates, roles)
    return entropy(pi @ q) - (pi * entropy(q)).sum()


def specialization_loss(gates: torch.Tensor, roles: torch.Tensor) -> torch.Tensor:
    """L_spec = -I(R; E)."""
    return -mutual_information(gates, roles)


def _pairwise_overlap(rows: torch.Tensor) -> torch.Tensor:
    """[E, E]: ||u^_e u^_f^T||_F^2 / r^2 for the experts' r x d matrices ``rows`` [E, r, d], rows scaled to unit
    length."""
    unit = rows / rows.norm(dim=-1, keepdim=True).clamp_min(EPS)
    cosines = torch.einsum("eid,fjd->efij", unit, unit)
    return cosines.pow(2).mean(dim=(-1, -2))


def subspace_overlap(a: list[torch.Tensor], b: list[torch.Tensor]) -> torch.Tensor:
    """Mean over expert pairs of (O_A + O_B) / 2 for one layer: ``a`` the experts' A (r x in), ``b`` their B
    (out x r)."""
    if len(a) < 2:
        return a[0].new_zeros(())
    overlap = (_pairwise_overlap(torch.stack(a)) + _pairwise_overlap(torch.stack(b).transpose(1, 2))) / 2
    upper = torch.triu_indices(len(a), len(a), offset=1, device=overlap.device)
    return overlap[upper[0], upper[1]].mean()


def disentanglement_loss(layers: list[tuple[list[torch.Tensor], list[torch.Tensor]]]) -> torch.Tensor:
    """L_dis: the mean of :func:`subspace_overlap` over layers, each given as (A list, B list)."""
    return torch.stack([subspace_overlap(a, b) for a, b in layers]).mean()
