"""Routing statistics of a RoleMoE model: how much the router's choice of experts says about the role.

From the gates of one prompt per record (rows of ``gates``, a distribution over experts) and the records' roles:

- ``p(e|r)``: the mean gates of role ``r``; ``p(e)`` their mean weighted by the roles' record counts;
- ``mi_ratio``: I(R; E) / H(R), the share of the role's uncertainty that the routing removes (0: routing ignores
  the role; 1: the routing identifies the role, possible only when there are at least as many experts as roles);
- ``overlap``: the mean over role pairs of sum_e min(p(e|r), p(e|r')), 1 when two roles route alike, 0 when they
  use disjoint experts;
- ``top``: each role's most used experts; :func:`touched` lists the experts a set of target roles routes to.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def role_expert(gates: np.ndarray, roles: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(roles in first-seen order, their shares [k], p(e|r) [k, E])."""
    names = list(dict.fromkeys(roles))
    index = {r: i for i, r in enumerate(names)}
    rows = np.array([index[r] for r in roles])
    counts = np.bincount(rows, minlength=len(names)).astype(float)
    sums = np.zeros((len(names), gates.shape[1]))
    np.add.at(sums, rows, gates)
    return names, counts / counts.sum(), sums / counts[:, None]


def statistics(gates: np.ndarray, roles: Sequence[str], top: int = 1) -> dict:
    """The routing statistics above, as a JSON-ready dict (``p_e_given_r`` keyed by role)."""
    gates = np.asarray(gates, dtype=float)
    names, share, p = role_expert(gates, roles)
    usage = share @ p
    h_role = _entropy(share)
    mi = _entropy(usage) - float(sum(s * _entropy(row) for s, row in zip(share, p, strict=True)))
    pairs = list(itertools.combinations(range(len(names)), 2))
    overlap = float(np.mean([np.minimum(p[i], p[j]).sum() for i, j in pairs])) if pairs else float("nan")
    return {
        "experts": gates.shape[1], "roles": len(names), "records": len(roles),
        "mutual_information": mi, "role_entropy": h_role, "mi_ratio": mi / h_role if h_role > 0 else float("nan"),
        "mi_bound": min(h_role, math.log(gates.shape[1])) / h_role if h_role > 0 else float("nan"),
        "overlap": overlap, "usage": usage.tolist(),
        "p_e_given_r": {r: row.tolist() for r, row in zip(names, p, strict=True)},
        "top": {r: [int(e) for e in np.argsort(-row, kind="stable")[:top]] for r, row in zip(names, p, strict=True)},
    }


def touched(stats: dict, targets: Sequence[str]) -> list[int]:
    """The experts the target roles route to (the union of their ``top`` experts), sorted."""
    return sorted({e for role in targets for e in stats["top"].get(role, [])})
