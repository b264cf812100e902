"""The question sets of the FrameSelect claims (bgrpo, framerouter, frameselect): generated releases per scale.

Every set is a release of the corpus's own generator (exact ground truth), built once under
``<cache>/frameselect/releases`` (:mod:`neurips26.methods.frameselect.releases`); only questions with
evidence spans are kept. Seeds of the releases keep the roles apart: test sets use release seed
``s`` (the claim's seed), train sets ``2000 + s``, and the one held-out set (choosing a selector,
calibrating an answerer) seed ``1000``. At ``tiny`` scale one small release of each role serves every
seed (the run only proves the claim runs end to end).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from neurips26.methods.frameselect import Pool, Selection, SelectorRefused, select
from neurips26.methods.frameselect.benchmarks import Question
from neurips26.methods.frameselect.evaluators import Placed, oracle_answer, recall
from neurips26.methods.frameselect.releases import generated, with_pools

HELD_OUT, TRAIN = 1000, 2000


@dataclass(frozen=True)
class Scale:
    """Release sizes and candidate rate of one scale."""

    clovr: dict
    tar: dict
    candidate_fps: float
    shared: bool  # one release per role for every seed


SCALES = {
    "tiny": Scale({"n_sets": 1, "videos_per_set": 2, "duration": 20.0},
                  {"n_videos": 3, "test_videos": 1, "duration": 20.0}, 0.5, True),
    "default": Scale({"n_sets": 3, "videos_per_set": 3, "duration": 24.0},
                     {"n_videos": 12, "test_videos": 2, "duration": 30.0}, 1.0, False),
    "large": Scale({"n_sets": 8, "videos_per_set": 3, "duration": 24.0},
                   {"n_videos": 30, "test_videos": 5, "duration": 30.0}, 2.0, False),
}


def questions(benchmark: str, role: str, seed: int, scale: str) -> tuple[list[Question], list[Pool]]:
    """The questions with evidence, and their pools, of ``benchmark``'s ``role`` set (test, train, held_out)."""
    spec = SCALES[scale]
    release = {"test": 0, "train": TRAIN, "held_out": HELD_OUT}[role]
    if role != "held_out" and not spec.shared:
        release += seed
    folder = generated(benchmark, release, **getattr(spec, benchmark))
    return with_pools(benchmark, folder, candidate_fps=spec.candidate_fps)


def pick(name: str, pool: Pool, budget: int, seed: int, fallback: str = "uniform") -> tuple[Selection, bool]:
    """Selector ``name``'s frames, or ``fallback``'s where it refuses the pool (a query naming no colour); and
    whether it fell back."""
    try:
        return select(name, pool, budget, seed), False
    except SelectorRefused:
        return select(fallback, pool, budget, seed), True


def placed(pool: Pool, indices: np.ndarray) -> Placed:
    """Candidates ``indices`` of ``pool`` as placed frames (window: the candidate spacing)."""
    indices = np.asarray(indices, np.int64)
    spacing = float(np.median(np.diff(pool.times[pool.video_index == 0]))) if pool.n > 1 else 1.0
    return Placed(pool.video_index[indices], pool.times[indices], spacing)


def evidence_recall(question: Question, pool: Pool, indices: np.ndarray) -> float:
    """Selection level: the share of the question's evidence spans with a chosen frame inside."""
    return float(recall(question, placed(pool, indices)))


def oracle(question: Question, pool: Pool, indices: np.ndarray) -> float:
    """Answer level, perfect perception: 1 when every evidence span is seen, else a guess among the options."""
    return float(oracle_answer(question, placed(pool, indices)))
