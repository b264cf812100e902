"""GRPO's reward: a frozen answering model's log-likelihood of the gold answer given the picked frames.

The answering model is handed in, never fitted here, and never sees evidence labels: each train
:class:`~.train.Example` carries ``judge(picks) -> 1.0 | 0.0 | None``, which answers the question from
the picked frames with the frozen answerer and grades it against the gold answer (``None``: the answerer
gave no option). An answerer that commits to one option is turned into a likelihood by its confidence
``c`` = P(right | it committed), fitted on *other* questions (a disjoint calibration split, answered from
evenly spread frames, Laplace-smoothed); the gold answer then has probability ``c`` when the answer is
right, ``(1 - c) / (K - 1)`` when it is wrong (the rest spread over the other options) and ``1 / K`` when
the answerer abstains, for ``K`` options. The reward is the log of that probability. An answerer with
token log-likelihoods (a VLM on a GPU) plugs in through :attr:`~.train.Example.loglik` instead.

Nothing here reads :attr:`~.train.Example.labels`: a reward fitted with shuffled labels is the same
reward (``tests/test_bgrpo.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


class Example(Protocol):
    """What the reward reads of a train example (:class:`.train.Example`): never its labels."""

    video_index: np.ndarray
    n_options: int
    judge: Callable[[np.ndarray], float | None]
    loglik: Callable[[np.ndarray], float] | None


def spread(n: int, k: int) -> np.ndarray:
    """``k`` candidate positions evenly spread over ``0..n-1`` (the calibration's frames)."""
    return np.unique(np.round(np.linspace(0, n - 1, min(k, n))).astype(np.int64))


@dataclass
class AnswerReward:
    """The log-likelihood of the gold answer under a frozen answerer (see the module docstring)."""

    confidence: float = 0.5  # P(right | the answerer commits to an option), fitted on other questions
    n_calibration: int = 0

    def fit(self, calibration: Sequence[Example], budget: int) -> AnswerReward:
        """Fit the confidence on calibration questions answered from ``budget`` evenly spread frames."""
        grades = [e.judge(spread(len(e.video_index), budget)) for e in calibration]
        committed = [g for g in grades if g is not None]
        self.confidence = (sum(committed) + 1.0) / (len(committed) + 2.0)
        self.n_calibration = len(calibration)
        return self

    def loglik(self, example: Example, picks: np.ndarray) -> float:
        """log P(gold answer | picked frames)."""
        if example.loglik is not None:
            return float(example.loglik(picks))
        k = max(2, example.n_options)
        grade = example.judge(picks)
        if grade is None:
            return float(-np.log(k))
        c = min(max(self.confidence, 1.0 / k + 1e-6), 1 - 1e-6)
        return float(np.log(c) if grade >= 0.5 else np.log((1 - c) / (k - 1)))
