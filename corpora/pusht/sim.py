"""The PushT simulator (``gym-pusht``), headless, with a state setter that reproduces the recorded demonstrations.

``gym-pusht`` sets a state's block position before its angle; pymunk rotates a body about its centre of gravity,
which for the T is not the body's origin, so the block lands elsewhere than the state says (its docstring warns
of it). :func:`set_state` sets the angle first, then the position, and zeroes every velocity: replaying a
demonstration's actions from its first state then reproduces its recorded states to float32 precision
(``tests/test_pusht_sim.py``). The control rate is a parameter, so a policy can act at 5, 10 or 20 Hz on the
same 100 Hz physics.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .records import CONTROL_HZ, SUCCESS_COVERAGE


def make_env(rate_hz: float = CONTROL_HZ):
    """A headless PushT environment (state observations) acting at ``rate_hz`` (100 Hz physics, a divisor of it)."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame without a display
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    from gym_pusht.envs.pusht import PushTEnv  # lazy: pygame and pymunk load only when a simulator is needed

    env = PushTEnv(obs_type="state")
    substeps = 1.0 / (env.dt * rate_hz)
    if abs(substeps - round(substeps)) > 1e-9 or round(substeps) < 1:
        raise ValueError(f"rate {rate_hz} Hz: the 100 Hz physics needs a rate that divides 100")
    env.control_hz = rate_hz
    env.reset(seed=0)
    return env


def set_state(env, state: Sequence[float]) -> None:
    """Put the agent and block exactly at ``state`` (agent x, y, block x, y, angle), at rest."""
    s = [float(v) for v in state]
    env.agent.position, env.agent.velocity = (s[0], s[1]), (0.0, 0.0)
    env.block.angle = s[4]
    env.block.position = (s[2], s[3])
    env.block.velocity, env.block.angular_velocity = (0.0, 0.0), 0.0
    env.space.step(env.dt)  # as gym-pusht does, so that contacts settle the same way


def observe(env) -> np.ndarray:
    """The state observation (agent x, y, block x, y, angle mod 2 pi)."""
    return np.asarray(env.get_obs(), dtype=np.float64)


def coverage(env) -> float:
    """Share of the target area the block covers now."""
    return float(env._get_coverage())


def coverage_of_states(states: np.ndarray) -> np.ndarray:
    """Coverage of each recorded state (rows of agent x, y, block x, y, angle)."""
    env = make_env()
    out = np.empty(len(states), dtype=np.float64)
    for i, state in enumerate(states):
        env.block.angle = float(state[4])
        env.block.position = (float(state[2]), float(state[3]))
        out[i] = coverage(env)
    return out


@dataclass
class Replay:
    """A replay of recorded actions: the states after each action and their coverage."""

    states: np.ndarray  # (n, 5): the state after action i
    coverage: np.ndarray  # (n,)

    def max_state_error(self, recorded: np.ndarray) -> float:
        """Largest difference (pixels) of agent and block positions from the recorded next states."""
        n = min(len(recorded) - 1, len(self.states))
        return float(np.abs(self.states[:n, :4] - recorded[1:n + 1, :4]).max()) if n else 0.0


def replay(first_state: Sequence[float], actions: np.ndarray, rate_hz: float = CONTROL_HZ) -> Replay:
    """Run ``actions`` in the simulator from ``first_state``."""
    env = make_env(rate_hz)
    set_state(env, first_state)
    states, covs = [], []
    for action in np.asarray(actions, dtype=np.float64):
        env.step(action)
        states.append(observe(env))
        covs.append(coverage(env))
    return Replay(np.array(states).reshape(-1, 5), np.array(covs))


def reward(coverage_value: np.ndarray | float) -> np.ndarray | float:
    """The simulator's reward: coverage over the success threshold, clipped to [0, 1]."""
    return np.clip(np.asarray(coverage_value) / SUCCESS_COVERAGE, 0.0, 1.0)
