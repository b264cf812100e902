"""Role-owned experts: each role is given its own expert, the router is taught to send a role's prompts there,
and routing purity says how far it does.

- :func:`owners`: role -> expert, roles in sorted order taking experts ``0, 1, ...`` (wrapping around when there
  are fewer experts than roles, so roles then share; with at least as many experts as roles every role owns one).
- :func:`routing_loss`: the router's cross-entropy against the owners, its supervised specialisation.
- :func:`purity`: for a set of target roles, the share of each one's routing mass that lands on its own expert,
  and how many experts the targets route to (by each prompt's largest gate).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F


def owners(roles: Sequence[str], experts: int) -> dict[str, int]:
    """The expert each role owns: the ``i``-th role in sorted order owns expert ``i mod experts``."""
    if experts < 1:
        raise ValueError("owners needs at least one expert")
    return {role: i % experts for i, role in enumerate(sorted(set(roles)))}


def exclusive(owner: dict[str, int], targets: Sequence[str]) -> bool:
    """True when no role outside ``targets`` owns a target's expert (forgetting them touches no other role)."""
    theirs = {owner[t] for t in targets}
    return not any(e in theirs for r, e in owner.items() if r not in set(targets))


def routing_loss(logits: torch.Tensor, owner_ids: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the router's scores [n, E] against each example's owning expert [n]."""
    return F.cross_entropy(logits, owner_ids)


def one_hot(owner_ids: torch.Tensor, experts: int) -> torch.Tensor:
    """Gates [n, E] that send every example to its owner's expert alone."""
    return F.one_hot(owner_ids, experts).float()


def purity(gates: np.ndarray, roles: Sequence[str], owner: dict[str, int], targets: Sequence[str]) -> dict:
    """Routing purity of ``targets`` from the gates of one prompt per record ([n, E], rows summing to 1).

    ``per_role[t]``: the mean gate mass of ``t``'s prompts on ``t``'s own expert; ``mean``: their mean over the
    targets; ``experts_used``: the experts that any target prompt routes to most; ``argmax_share``: the share of
    target prompts whose largest gate is their own expert."""
    gates = np.asarray(gates, dtype=float)
    roles = list(roles)
    per_role, hits, used = {}, [], set()
    for target in targets:
        rows = [i for i, r in enumerate(roles) if r == target]
        if not rows:
            continue
        mine = gates[rows]
        per_role[target] = float(mine[:, owner[target]].mean())
        top = mine.argmax(1)
        hits += (top == owner[target]).tolist()
        used.update(int(e) for e in top)
    return {"per_role": per_role, "mean": float(np.mean(list(per_role.values()))) if per_role else float("nan"),
            "argmax_share": float(np.mean(hits)) if hits else float("nan"), "experts_used": sorted(used),
            "n_experts_used": len(used), "targets": len(per_role), "experts": int(gates.shape[1]),
            "exclusive": exclusive(owner, list(per_role))}
