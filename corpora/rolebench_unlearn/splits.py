"""The fixed splits of RoleBench-Unlearn, decided by sha256 so every rebuild agrees.

- **Forget sets.** Roles are ordered by the sha256 of their name; ``forgetNN``
  takes the first ``max(1, round(NN/100 * n_roles))`` of them as targets and
  leaves the rest as its retain complement. The sets are nested
  (forget01 ⊆ forget05 ⊆ forget10). With 95 RoleBench roles that is 1, 5 and
  10 roles; with the 20 personas of the embedded sample, 1, 1 and 2.
- **Train/test within a role.** A role's records are ordered by the sha256 of
  their question; the first ``max(1, round(0.2 * n))`` are ``test`` (held-out
  questions), the rest ``train`` (what an unlearning method may train on).
- **Row order.** Rows are interleaved across roles (each role's first record,
  then each role's second, ...), so ``--limit N`` in lm-eval covers many roles.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

FORGET_SHARES = {"forget01": 0.01, "forget05": 0.05, "forget10": 0.10}
TEST_SHARE = 0.2


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def role_order(roles: Iterable[str]) -> list[str]:
    """Roles in sha256 order: the order in which they become forget targets."""
    return sorted(set(roles), key=lambda r: (sha(r), r))


def forget_roles(roles: Iterable[str], share: float) -> list[str]:
    """The target roles of a forget set: the first ``max(1, round(share * n))`` in sha256 order."""
    ordered = role_order(roles)
    return ordered[: max(1, round(share * len(ordered)))] if ordered else []


def forget_sets(roles: Iterable[str]) -> dict[str, list[str]]:
    """{"forget01": [...], "forget05": [...], "forget10": [...]}, nested."""
    roles = list(roles)
    return {name: forget_roles(roles, share) for name, share in FORGET_SHARES.items()}


def test_questions(questions: Iterable[str]) -> set[str]:
    """The held-out questions of one role: the first ``max(1, round(0.2 * n))`` in sha256 order."""
    ordered = sorted(set(questions), key=lambda q: (sha(q), q))
    return set(ordered[: max(1, round(TEST_SHARE * len(ordered)))]) if ordered else set()


def interleave(rows: list[dict], role_key: str = "role", id_key: str = "record_id") -> list[dict]:
    """Rows ordered by (rank within their role, role's sha256): round-robin over roles."""
    by_role: dict[str, list[dict]] = {}
    for row in sorted(rows, key=lambda r: sha(r[id_key])):
        by_role.setdefault(row[role_key], []).append(row)
    ranked = [(i, sha(role), row) for role, group in by_role.items() for i, row in enumerate(group)]
    return [row for _, _, row in sorted(ranked, key=lambda t: (t[0], t[1]))]
