"""Answerers that know nothing, for the measured baselines of evaluators outside lm-eval.

A baseline is the best score an answerer gets without looking at the question. For an answer that is a text
(or any value compared with the gold answer), the two answerers are those :mod:`neurips26.tasks.measure` runs
on a free-text lm-eval split:

* :func:`constant_gold`: the same answer for every document, the best of the split's most frequent gold answers,
  each scored on the documents of other groups than the first one it was taken from (a document is its own
  group unless ``groups`` says otherwise, e.g. one shape rendered at three grids);
* :func:`random_gold`: per document, the gold answer of a document of another group drawn uniformly, the mean
  over ``seeds`` seeds.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T", bound=Hashable)

CANDIDATES = 16  # how many of the most frequent gold answers are tried as the constant answer
SEEDS = 5  # the random answerer's score is the mean over this many seeds


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _groups(n: int, groups: Sequence[Hashable] | None) -> Sequence[Hashable]:
    if groups is not None and len(groups) != n:
        raise ValueError(f"{len(groups)} groups for {n} documents")
    return list(range(n)) if groups is None else groups


def constant_gold(golds: Sequence[T], score: Callable[[int, T], float], higher_is_better: bool = True,
                  groups: Sequence[Hashable] | None = None, candidates: int = CANDIDATES) -> tuple[float, T]:
    """(score, answer) of the best constant answer among the ``candidates`` most frequent gold answers (ties in a
    seeded order), each scored by ``score(document, answer)`` on the documents of the other groups."""
    if not golds:
        raise ValueError("no documents")
    group = _groups(len(golds), groups)
    counts = Counter(golds)
    order = sorted(counts, key=repr)
    random.Random(0).shuffle(order)
    order.sort(key=lambda gold: -counts[gold])  # most frequent first, ties in the seeded order
    best: tuple[float, T] | None = None
    for answer in order[:candidates]:
        source = group[golds.index(answer)]  # the document it is taken from (its first)
        value = _mean([score(i, answer) for i in range(len(golds)) if group[i] != source])
        if best is None or (value > best[0] if higher_is_better else value < best[0]):
            best = (value, answer)
    assert best is not None
    return best


def random_gold(golds: Sequence[T], score: Callable[[int, T], float], groups: Sequence[Hashable] | None = None,
                seeds: int = SEEDS) -> float:
    """The mean over ``seeds`` seeds of the mean score when each document is answered with the gold answer of a
    document of another group, drawn uniformly."""
    group = _groups(len(golds), groups)
    others = [[j for j in range(len(golds)) if group[j] != group[i]] for i in range(len(golds))]
    if not all(others):
        raise ValueError("a random answer needs documents of at least two groups")
    means = []
    for seed in range(seeds):
        rng = random.Random(seed)
        means.append(_mean([score(i, golds[rng.choice(pool)]) for i, pool in enumerate(others)]))
    return _mean(means)
