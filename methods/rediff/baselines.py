"""The measured baseline of ``rediff_arithmetic``: exact match of answerers that never read the problem.

On the standard evaluation set (:func:`~.data.evaluation_set`, the protocol's digits and size):

* ``empty``: the empty answer;
* ``constant``: the same sum for every problem, the best of the set's most frequent answers
  (:func:`neurips26.knownothing.constant_gold`, each scored on the other problems);
* ``random``: per problem, ``digits + 1`` digits drawn uniformly (the answer's length and alphabet), the mean over
  :data:`~neurips26.knownothing.SEEDS` seeds.
"""

from __future__ import annotations

import random

from neurips26.knownothing import SEEDS, constant_gold
from neurips26.protocol import MeasuredBaseline

from .data import DATA_VERSION, evaluation_set
from .protocol import STANDARD_DIGITS, STANDARD_SIZE, TASK


def measure(task: str = TASK, limit: int | None = None) -> MeasuredBaseline:
    """The empty, constant and random answerers' exact match on the standard set (its first ``limit`` problems)."""
    problems = evaluation_set(STANDARD_DIGITS, STANDARD_SIZE)
    golds = [problems.text(i)[1] for i in range(len(problems))][:limit]
    if not golds:
        raise ValueError("no problems to measure on")

    def exact(i: int, answer: str) -> float:
        return float(answer == golds[i])

    constant, answer = constant_gold(golds, exact)
    draws = []
    for seed in range(SEEDS):
        rng = random.Random(seed)
        draws.append(sum(exact(i, "".join(rng.choices("0123456789", k=len(g)))) for i, g in enumerate(golds))
                     / len(golds))
    scores = {"empty": sum(exact(i, "") for i in range(len(golds))) / len(golds), "constant": constant,
              "random": sum(draws) / len(draws)}
    data = (f"rediff_arithmetic digits{STANDARD_DIGITS}/test (seed-0 evaluation set, data version {DATA_VERSION}), "
            f"sha256 {problems.digest()[:12]}")
    return MeasuredBaseline.best_of(scores, True, answer=answer, n=len(golds), seeds=SEEDS, data=data,
                                    how="methods/rediff/baselines.py")
