"""Rollouts of a policy in the PushT simulator over a fixed set of seeds, and the per-rollout metrics.

Each seed fixes the initial agent and block pose (``gym-pusht``'s reset); all rollouts of a run step together so
the policy predicts for every unfinished rollout in one batch. A rollout ends when the block covers more than
95% of the target (success, as in Diffusion Policy) or after ``max_seconds``. Per rollout: the max coverage,
success, and the smoothness of the commanded actions (:mod:`.smoothness`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from neurips26.corpora.pusht import sim
from neurips26.corpora.pusht.records import SUCCESS_COVERAGE

from neurips26.stats import wilson

from .data import keypoints_from_state
from .policies import Policy
from .protocol import FIRST_SEED, STANDARD
from .smoothness import smoothness


@dataclass
class Rollout:
    """One episode of a policy in the simulator."""

    seed: int
    rate_hz: float
    coverage: list[float] = field(default_factory=list)  # after each step
    actions: list[list[float]] = field(default_factory=list)  # commanded, pixels

    @property
    def max_coverage(self) -> float:
        return max(self.coverage, default=0.0)

    @property
    def success(self) -> bool:
        return self.max_coverage >= SUCCESS_COVERAGE

    def metrics(self) -> dict[str, float]:
        """max_coverage, success (0/1) and the smoothness metrics."""
        return {"max_coverage": self.max_coverage, "rollout_success": float(self.success),
                **smoothness(np.asarray(self.actions).reshape(-1, 2), self.rate_hz)}


def seeds(episodes: int = STANDARD["episodes"], first: int = FIRST_SEED) -> list[int]:
    """The fixed evaluation seeds."""
    return list(range(first, first + episodes))


def rollouts(policy: Policy, seed_list: list[int], rate_hz: float = 10.0, max_seconds: float = 30.0,
             sample_seed: int = 0, advance=None,
             shift: Callable[[np.ndarray], np.ndarray] | None = None) -> list[Rollout]:
    """Run ``policy`` from every seed's initial state at ``rate_hz``; ``sample_seed`` seeds the flow's noise.

    ``shift`` maps a commanded action to the one the simulator executes (a shifted robot, :mod:`.shift`); the
    rollout records the commanded actions. A policy with a ``ground`` method plans latent actions and grounds
    step ``k`` of each plan on the states seen since the plan began (``histories``: the state before the plan,
    then every state from its start to now): ``ground(histories, plans, k) -> actions`` (FreeAct)."""
    envs = [sim.make_env(rate_hz) for _ in seed_list]
    for env, seed in zip(envs, seed_list, strict=True):
        env.reset(seed=seed)
    runs = [Rollout(seed, rate_hz) for seed in seed_list]
    limit = round(max_seconds * rate_hz)
    generator = torch.Generator(device=policy.mean.device).manual_seed(sample_seed)
    ground = getattr(policy, "ground", None)
    active = list(range(len(envs)))
    last = {i: sim.observe(env) for i, env in enumerate(envs)}  # the state before the latest step
    steps = 0
    while active and steps < limit:
        states = np.stack([sim.observe(envs[i]) for i in active])
        plans = policy.act(states, keypoints_from_state(states), rate_hz, generator)
        horizon = min(min(len(p) for p in plans), limit - steps)
        history = {i: [last[i], state] for i, state in zip(active, states, strict=True)}
        for k in range(horizon):  # every active rollout steps together, so grounding is batched
            going = [(j, i) for j, i in enumerate(active) if not runs[i].success]
            if not going:
                break
            if ground is None:
                actions = [plans[j][k] for j, _ in going]
            else:
                actions = ground([np.stack(history[i]) for _, i in going], [plans[j] for j, _ in going], k)
            for (_, i), action in zip(going, actions, strict=True):
                envs[i].step(action if shift is None else shift(action))
                runs[i].actions.append([float(action[0]), float(action[1])])
                runs[i].coverage.append(sim.coverage(envs[i]))
                last[i] = history[i][-1]
                history[i].append(sim.observe(envs[i]))
        steps += horizon
        done = [i for i in active if runs[i].success]
        active = [i for i in active if not runs[i].success]
        if advance:
            advance(horizon, len(done))
    return runs


def summary(runs: list[Rollout]) -> dict[str, float]:
    """Mean of every per-rollout metric, and a Wilson 95% interval of the success rate."""
    rows = [r.metrics() for r in runs]
    out = {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
    successes = sum(r.success for r in runs)
    low, high = wilson(successes / len(runs), len(runs))
    out["success_low"], out["success_high"] = float(low), float(high)
    out["max_coverage_stderr"] = float(np.std([r.max_coverage for r in runs], ddof=1) / np.sqrt(len(runs))) \
        if len(runs) > 1 else 0.0
    return out
