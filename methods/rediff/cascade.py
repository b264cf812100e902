"""The cascade evaluator: how decoding errors spread when a masked-diffusion LM commits tokens in parallel.

From a :class:`~.decoding.Trace` and the exact targets, per problem: the step at which each answer position was
committed and whether the committed token was right, and whether the final token is right. Over a set of
problems:

* ``token_acc``, ``exact_match``: of the final answers;
* ``cascade_lift`` = P(a position is wrong when committed | a position within ``window`` tokens of it was
  committed wrong at an earlier step) - P(a position is wrong when committed). 0 when errors are independent of
  each other; positive when a committed error makes later errors near it more likely (the cascade). It counts
  co-occurrence in commit order, so errors with a shared cause (a hard problem) raise it too; committing every
  position at once leaves no earlier error, and the lift is 0;
* repetition of the final answers: ``distinct_2`` (distinct bigrams / bigrams) and ``longest_repeat`` (the
  longest n-gram that occurs twice), beside the same numbers for the targets;
* ``correction_rate``: committed errors that were later revised to the right token, over committed errors
  (``broken_rate``: right tokens revised to wrong ones, over right commits);
* :func:`speed_quality`: all of these against tokens committed per step (1, 2, 4, 8, ...).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .decoding import Trace


def earlier_error_nearby(commit_step: np.ndarray, wrong: np.ndarray, window: int) -> np.ndarray:
    """(n, length) bool: some other position within ``window`` tokens was committed wrong at an earlier step."""
    n, length = commit_step.shape
    found = np.zeros((n, length), dtype=bool)
    for offset in range(1, window + 1):
        if offset >= length:
            break
        for here, there in ((slice(offset, None), slice(None, -offset)), (slice(None, -offset), slice(offset, None))):
            found[:, here] |= wrong[:, there] & (commit_step[:, there] < commit_step[:, here])
    return found


def cascade_lift(commit_step: np.ndarray, wrong: np.ndarray, window: int = 2) -> dict[str, float | int]:
    """``lift`` = P(wrong | an earlier committed error within ``window``) - P(wrong), with both terms and how
    many positions had such an error (``conditioned``; the lift is 0 when none had)."""
    nearby = earlier_error_nearby(commit_step, wrong, window)
    p_error = float(wrong.mean()) if wrong.size else 0.0
    conditioned = int(nearby.sum())
    p_after = float(wrong[nearby].mean()) if conditioned else p_error
    return {"lift": p_after - p_error, "p_error": p_error, "p_error_after_error": p_after, "conditioned": conditioned}


def distinct_n(tokens: Iterable[int], n: int = 2) -> float:
    """Distinct n-grams over n-grams (1.0 for a sequence shorter than ``n``)."""
    seq = list(tokens)
    grams = [tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 1.0


def longest_repeat(tokens: Iterable[int]) -> int:
    """Length of the longest n-gram that occurs at least twice (occurrences may overlap)."""
    seq = list(tokens)
    best = 0
    for n in range(1, len(seq)):
        grams = [tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)]
        if len(set(grams)) == len(grams):
            break  # no repeated n-gram, so none longer either
        best = n
    return best


def per_problem(trace: Trace, targets: np.ndarray) -> list[dict[str, Any]]:
    """One record per problem: commit steps, commit-time and final correctness, revisions, repetition."""
    commit_right = trace.committed == targets
    final_right = trace.final == targets
    rows = []
    for i in range(len(targets)):
        rows.append({
            "exact_match": float(final_right[i].all()),
            "token_acc": float(final_right[i].mean()),
            "commit_step": trace.commit_step[i].tolist(),
            "commit_right": commit_right[i].astype(int).tolist(),
            "final_right": final_right[i].astype(int).tolist(),
            "revisions": int(trace.revisions[i].sum()),
            "distinct_2": distinct_n(trace.final[i].tolist()),
            "longest_repeat": longest_repeat(trace.final[i].tolist()),
        })
    return rows


def summarise(trace: Trace, targets: np.ndarray, window: int = 2) -> dict[str, Any]:
    """The evaluator's metrics over a set of problems (see the module docstring)."""
    commit_wrong = trace.committed != targets
    final_right = trace.final == targets
    errors = int(commit_wrong.sum())
    rights = int((~commit_wrong).sum())
    lift = cascade_lift(trace.commit_step, commit_wrong, window)
    n = len(targets)
    exact = float(final_right.all(axis=1).mean()) if n else 0.0
    return {
        "tokens_per_step": trace.tokens_per_step,
        "steps": trace.steps,
        "forward_passes": trace.forward_passes,
        "n": n,
        "exact_match": exact,
        "exact_match_stderr": math.sqrt(exact * (1 - exact) / (n - 1)) if n > 1 else 0.0,
        "token_acc": float(final_right.mean()) if n else 0.0,
        "commit_error_rate": lift["p_error"],
        "cascade_lift": lift["lift"],
        "p_error_after_error": lift["p_error_after_error"],
        "cascade_conditioned": lift["conditioned"],
        "window": window,
        "correction_rate": float((commit_wrong & final_right).sum() / errors) if errors else 0.0,
        "broken_rate": float((~commit_wrong & ~final_right).sum() / rights) if rights else 0.0,
        "distinct_2": float(np.mean([distinct_n(t) for t in trace.final.tolist()])) if n else 1.0,
        "longest_repeat": float(np.mean([longest_repeat(t) for t in trace.final.tolist()])) if n else 0.0,
        "target_distinct_2": float(np.mean([distinct_n(t) for t in targets.tolist()])) if n else 1.0,
        "target_longest_repeat": float(np.mean([longest_repeat(t) for t in targets.tolist()])) if n else 0.0,
    }


def speeds(length: int) -> list[int]:
    """Tokens per step 1, 2, 4, ... up to ``length`` (all at once) included."""
    ks = [1]
    while ks[-1] * 2 < length:
        ks.append(ks[-1] * 2)
    return ks + [length] if ks[-1] != length else ks


def speed_quality(run: Callable[[int], Trace], targets: np.ndarray, tokens_per_step: Iterable[int],
                  window: int = 2) -> list[dict[str, Any]]:
    """:func:`summarise` of ``run(k)`` for every ``k`` tokens per step: the speed-quality curve."""
    return [summarise(run(k), targets, window) for k in tokens_per_step]
