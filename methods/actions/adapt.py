"""FreeAct adaptation: act in a latent action space learned from observations, ground it on the target robot
from its own play, with no target-domain demonstration.

Three parts, each trained with its own optimiser steps (counted in :class:`FreeActCost`):

1. **Latent action model** (from observation sequences alone; no actions): an inverse-dynamics encoder reads the
   state before, now and after a step and gives a latent action ``z`` (``latent`` dimensions, a bottleneck as
   small as the robot's action space); a forward-dynamics model predicts the change of the state from the state,
   its last change and ``z``. Trained on source demonstrations' states only.
2. **Latent policy**: the behaviour-cloning MLP of :mod:`.policies` (same size), predicting from the state the
   path of the next ``HORIZON`` latent actions (their running sum: the encoder's labels of the source
   demonstrations, summed as a raw chunk sums displacements into positions). Executed closed loop: each step asks
   for the latent action that brings the path realised since the plan began (the encoder's labels of the states
   seen) to the plan's next point, so errors do not accumulate over the chunk.
3. **Grounding decoder** (the adaptation): a small MLP from the agent's position, its last displacement and ``z``
   to the commanded action, fitted on the *target* robot's play: random waypoint motions (no task, no reward,
   no demonstration) labelled with the frozen encoder. Only this part sees the target domain.

At run time the policy plans a latent chunk and each latent action is grounded on the state it is executed in
(:meth:`FreeActPolicy.ground`, used by :func:`.evaluate.rollouts`). The states here are the simulator's
(agent x, y, block x, y, angle); the frames-based latent action model of :mod:`.freeact` is the same idea on
pixels, too slow to roll out on a CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from neurips26.corpora.pusht import sim
from torch import nn

from .data import Demo, from_unit, observation, to_unit
from .policies import mlp

DIFF_SCALE = 25.6  # a state change of 10 px is 1 after observation() (positions / 256) and this scale
HORIZON = 16  # latent actions per chunk (as the raw-chunk policies)
EXECUTE = 8  # executed before planning again


def transitions(states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observation now, scaled last change, scaled next change) of every step of one state sequence
    (the first step's last change is zero; the last step's next change is zero)."""
    obs = observation(states).astype(np.float32)
    change = np.diff(obs, axis=0) * DIFF_SCALE
    zero = np.zeros((1, obs.shape[1]), dtype=np.float32)
    return obs, np.concatenate([zero, change]), np.concatenate([change, zero])


class LatentActionModel(nn.Module):
    """Inverse dynamics (state, last change, next change) -> z; forward dynamics (state, last change, z) -> next
    change."""

    def __init__(self, latent: int = 2, hidden: int = 128, obs_dim: int = 6):
        super().__init__()
        self.idm = mlp(3 * obs_dim, latent, hidden, 2)
        self.fdm = mlp(2 * obs_dim + latent, obs_dim, hidden, 2)

    def encode(self, obs: torch.Tensor, last: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        return self.idm(torch.cat([obs, last, after], dim=1))

    def loss(self, obs: torch.Tensor, last: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        """Next-change error of the forward model through the encoder's latent (plus a small pull of z to 0 that
        fixes its scale)."""
        z = self.encode(obs, last, after)
        predicted = self.fdm(torch.cat([obs, last, z], dim=1))
        return torch.mean((predicted - after) ** 2) + 1e-3 * torch.mean(z**2)


def optimise(module: nn.Module, loss: Callable[[torch.Tensor], torch.Tensor], n: int, steps: int,
             batch_size: int = 256, lr: float = 1e-3, seed: int = 0) -> float:
    """``steps`` AdamW steps (cosine schedule) of ``loss(batch indices)`` over ``n`` examples; the final loss."""
    optimiser = torch.optim.AdamW(module.parameters(), lr=lr, weight_decay=1e-6)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, steps)
    generator = torch.Generator().manual_seed(seed)
    module.train()
    losses = []
    for _ in range(steps):
        value = loss(torch.randint(n, (batch_size,), generator=generator))
        optimiser.zero_grad(set_to_none=True)
        value.backward()
        optimiser.step()
        schedule.step()
        losses.append(value.item())
    module.eval()
    return float(np.mean(losses[-50:]))


@torch.no_grad()
def label(model: LatentActionModel, states: np.ndarray) -> np.ndarray:
    """The latent action of every step of a state sequence."""
    obs, last, after = (torch.as_tensor(x) for x in transitions(states))
    return model.encode(obs, last, after).numpy()


def grounding_inputs(previous: np.ndarray, now: np.ndarray, latent: np.ndarray) -> np.ndarray:
    """The decoder's input: agent position now (scaled), its last displacement (scaled) and the latent action."""
    agent = observation(now)[:, :2]
    moved = (observation(now)[:, :2] - observation(previous)[:, :2]) * DIFF_SCALE
    return np.concatenate([agent, moved, latent], axis=1).astype(np.float32)


@dataclass
class Play:
    """The target robot's play: states (one more than actions per episode) and the commanded actions."""

    states: list[np.ndarray]
    actions: list[np.ndarray]


def play(shift: Callable[[np.ndarray], np.ndarray] | None, episodes: int, steps: int, seed: int = 0,
         first_seed: int = 200_000) -> Play:
    """Random waypoint motion on the (shifted) robot: the command walks toward a waypoint drawn uniformly in the
    scene at a random speed and switches waypoint every 5-20 steps. No task, no reward, no demonstration."""
    rng = np.random.default_rng(seed)
    out = Play([], [])
    for e in range(episodes):
        env = sim.make_env()
        env.reset(seed=first_seed + 1000 * seed + e)
        command = rng.uniform(30, 482, 2)
        states, actions = [sim.observe(env)], []
        waypoint, left, speed = command, 0, 0.0
        for _ in range(steps):
            if left == 0:
                waypoint, left, speed = rng.uniform(30, 482, 2), int(rng.integers(5, 21)), float(rng.uniform(3, 25))
            gap = waypoint - command
            command = command + gap * min(1.0, speed / (np.linalg.norm(gap) + 1e-9)) + rng.normal(0, 1.5, 2)
            command = np.clip(command, 0, 512)
            left -= 1
            env.step(command if shift is None else shift(command))
            states.append(sim.observe(env))
            actions.append(command.copy())
        out.states.append(np.array(states))
        out.actions.append(np.array(actions))
    return out


class FreeActPolicy(nn.Module):
    """Latent policy + grounding decoder (see the module docstring); rolled out by :func:`.evaluate.rollouts`."""

    def __init__(self, latent: int = 2, hidden: int = 256, depth: int = 3, obs_dim: int = 6):
        super().__init__()
        self.latent = latent
        self.net = mlp(obs_dim, HORIZON * latent, hidden, depth)
        self.decoder = mlp(4 + latent, 2, hidden, 2)
        self.register_buffer("mean", torch.zeros(HORIZON * latent))
        self.register_buffer("std", torch.ones(HORIZON * latent))
        self.model: LatentActionModel | None = None  # the encoder that labels what was realised (set by fit_policy)

    def fit_policy(self, demos: list[Demo], model: LatentActionModel, steps: int, batch_size: int = 256,
                   seed: int = 0) -> float:
        """Behaviour cloning of the encoder's latent paths of ``demos`` (their actions are never read)."""
        self.model = model
        obs, chunks = [], []
        for demo in demos:
            z = label(model, demo.state)
            index = np.minimum(np.arange(len(z))[:, None] + np.arange(HORIZON), len(z) - 1)
            obs.append(observation(demo.state))
            chunks.append(np.cumsum(z[index], axis=1).reshape(len(z), -1))  # the latent path from now on
        x = torch.as_tensor(np.concatenate(obs), dtype=torch.float32)
        y = torch.as_tensor(np.concatenate(chunks), dtype=torch.float32)
        self.mean.copy_(y.mean(0))
        self.std.copy_(y.std(0) + 1e-6)
        target = (y - self.mean) / self.std
        return optimise(self.net, lambda i: torch.mean((self.net(x[i]) - target[i]) ** 2), len(x), steps,
                        batch_size, seed=seed)

    def fit_decoder(self, data: Play, model: LatentActionModel, steps: int, batch_size: int = 256,
                    seed: int = 0) -> float:
        """Fit the grounding decoder on play: (state before, state, encoder's latent) -> commanded action."""
        inputs, targets = [], []
        for states, actions in zip(data.states, data.actions, strict=True):
            z = label(model, states)[:-1]  # the latent of each commanded step (state i -> i + 1)
            previous = np.concatenate([states[:1], states[:-2]])
            inputs.append(grounding_inputs(previous, states[:-1], z))
            targets.append(to_unit(actions))
        x = torch.as_tensor(np.concatenate(inputs))
        y = torch.as_tensor(np.concatenate(targets), dtype=torch.float32)
        return optimise(self.decoder, lambda i: torch.mean((self.decoder(x[i]) - y[i]) ** 2), len(x), steps,
                        batch_size, seed=seed)

    @torch.no_grad()
    def act(self, states: np.ndarray, keypoints: np.ndarray | None, rate_hz: float,
            generator: torch.Generator | None = None) -> list[np.ndarray]:
        """For each state, the planned latent path (running sum of latent actions) of the steps to execute before
        planning again (10 Hz steps)."""
        if rate_hz != 10.0:
            raise ValueError("FreeAct's latent actions are 10 Hz steps")
        cond = torch.as_tensor(observation(states), dtype=torch.float32)
        paths = (self.net(cond) * self.std + self.mean).numpy().reshape(len(states), HORIZON, self.latent)
        return [path[:EXECUTE] for path in paths]

    @torch.no_grad()
    def ground(self, histories: list[np.ndarray], plans: list[np.ndarray], k: int) -> np.ndarray:
        """The commanded actions (pixels) for step ``k`` of each plan: the latent action that brings the path
        realised since the plan began (the encoder's labels of the states seen) to the plan's ``k``-th point,
        grounded by the decoder. ``histories``: per rollout, the state before the plan, then every state from the
        plan's start to now."""
        realised = np.zeros((len(histories), self.latent), dtype=np.float32)
        if k and self.model is not None:
            for j, history in enumerate(histories):
                obs, last, after = (torch.as_tensor(x) for x in transitions(history))
                realised[j] = self.model.encode(obs, last, after)[1:k + 1].sum(0).numpy()
        wanted = np.stack([plan[k] for plan in plans]).astype(np.float32) - realised
        previous = np.stack([h[-2] for h in histories])
        now = np.stack([h[-1] for h in histories])
        x = torch.as_tensor(grounding_inputs(previous, now, wanted))
        return from_unit(self.decoder(x).numpy())


@dataclass
class FreeActCost:
    """Optimiser steps of each part and their final losses."""

    latent_model_steps: int
    policy_steps: int
    decoder_steps: int
    losses: dict[str, float]

    @property
    def total_steps(self) -> int:
        return self.latent_model_steps + self.policy_steps + self.decoder_steps


def train_latent_model(demos: list[Demo], steps: int, latent: int = 2, batch_size: int = 256,
                       seed: int = 0) -> tuple[LatentActionModel, float]:
    """The latent action model trained on the states of ``demos`` (no actions)."""
    torch.manual_seed(seed)
    parts = [transitions(d.state) for d in demos]
    obs, last, after = (torch.as_tensor(np.concatenate([p[k] for p in parts])) for k in range(3))
    model = LatentActionModel(latent)
    final = optimise(model, lambda i: model.loss(obs[i], last[i], after[i]), len(obs), steps, batch_size, seed=seed)
    return model, final


def freeact(demos: list[Demo], target_play: Play, *, latent_steps: int, policy_steps: int, decoder_steps: int,
            latent: int = 2, seed: int = 0) -> tuple[FreeActPolicy, LatentActionModel, FreeActCost]:
    """FreeAct end to end: latent model and latent policy on source states, decoder on target play."""
    model, lam_loss = train_latent_model(demos, latent_steps, latent, seed=seed)
    torch.manual_seed(seed)
    policy = FreeActPolicy(latent)
    policy_loss = policy.fit_policy(demos, model, policy_steps, seed=seed)
    decoder_loss = policy.fit_decoder(target_play, model, decoder_steps, seed=seed)
    cost = FreeActCost(latent_steps, policy_steps, decoder_steps,
                       {"latent_model": lam_loss, "latent_policy": policy_loss, "decoder": decoder_loss})
    return policy.eval(), model, cost
