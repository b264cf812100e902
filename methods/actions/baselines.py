"""The measured baseline of ``pusht_rollout``: mean max coverage of policies that never look at the scene.

Rolled out exactly as a policy is (:func:`~.evaluate.rollouts`, the protocol's seeds, rate and length):

* ``empty``: a policy that does nothing (it commands the agent's own position: each seed's initial coverage,
  except where the agent starts touching the block, which the first step pushes apart);
* ``constant``: the same target point at every step of every rollout, the best of a 3 x 3 grid over the
  workspace (:data:`GRID`);
* ``random``: a target drawn uniformly over the workspace at every step (``action_space.sample()``), the mean
  over :data:`~neurips26.knownothing.SEEDS` seeds.
"""

from __future__ import annotations

from itertools import product

import numpy as np
import torch

from neurips26.knownothing import SEEDS
from neurips26.protocol import MeasuredBaseline

from .evaluate import rollouts, seeds
from .protocol import STANDARD, TASK

WORKSPACE = 512.0  # gym-pusht's action space: [0, 512] pixels per axis
GRID = tuple(float(v) for v in (128, 256, 384))
PLAN = 10  # actions per plan (how often the rollout asks again; it changes nothing for these policies)


class _Answerer:
    """A policy that ignores what it observes: ``target(state, rng) -> action`` at every step."""

    def __init__(self, kind: str, point: tuple[float, float] = (0.0, 0.0), seed: int = 0) -> None:
        self.mean = torch.zeros(1)  # rollouts() reads the policy's device from it
        self.kind, self.point, self.rng = kind, np.asarray(point, float), np.random.default_rng(seed)

    def act(self, states: np.ndarray, keypoints: np.ndarray | None, rate_hz: float,
            generator: torch.Generator | None = None) -> list[np.ndarray]:
        if self.kind == "still":  # the agent's position, held (the agent does not move)
            return [np.repeat(state[None, :2], PLAN, axis=0) for state in states]
        if self.kind == "constant":
            return [np.repeat(self.point[None], PLAN, axis=0) for _ in states]
        return [self.rng.uniform(0.0, WORKSPACE, (PLAN, 2)) for _ in states]


def _coverage(policy: _Answerer, seed_list: list[int], seconds: float) -> float:
    runs = rollouts(policy, seed_list, STANDARD["rate_hz"], seconds)  # type: ignore[arg-type]
    return float(np.mean([run.max_coverage for run in runs]))


def measure(task: str = TASK, limit: int | None = None, max_seconds: float | None = None) -> MeasuredBaseline:
    """The empty, constant and random policies' mean max coverage over the standard seeds (their first ``limit``;
    rollouts of ``max_seconds``, default the protocol's: the whole set takes about 15 minutes)."""
    seed_list = seeds(STANDARD["episodes"], STANDARD["first_seed"])[:limit]
    seconds = float(STANDARD["max_seconds"] if max_seconds is None else max_seconds)
    constants = {point: _coverage(_Answerer("constant", point), seed_list, seconds) for point in product(GRID, GRID)}
    best = max(constants, key=constants.__getitem__)
    scores = {"empty": _coverage(_Answerer("still"), seed_list, seconds), "constant": constants[best],
              "random": float(np.mean([_coverage(_Answerer("random", seed=s), seed_list, seconds)
                                       for s in range(SEEDS)]))}
    data = (f"pusht_rollout/test: gym-pusht seeds {seed_list[0]}-{seed_list[-1]} at {STANDARD['rate_hz']:g} Hz, "
            f"{seconds:g} s each")
    return MeasuredBaseline.best_of(scores, True, answer=f"target ({best[0]:g}, {best[1]:g})", n=len(seed_list),
                                    seeds=SEEDS, data=data, how="methods/actions/baselines.py")
