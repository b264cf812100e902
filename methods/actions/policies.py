"""Policies over action chunks: a behaviour-cloning MLP, and flow matching over raw chunks or DCT coefficients.

* ``bc``: an MLP regresses the chunk from the observation (mean squared error); deterministic.
* ``flow`` over ``raw`` chunks: a velocity field ``v(x_t, t, obs)`` trained by conditional flow matching on the
  straight path ``x_t = (1 - t) x_0 + t x_1`` from Gaussian noise ``x_0`` to the (normalised) chunk ``x_1``;
  sampling integrates it with Euler steps.
* ``flow`` over ``dct`` coefficients (FAFM): the same, with ``x_1`` the chunk's first K cosine-series
  coefficients over a fixed duration (rate-free), decoded at whatever rate the robot runs, plus the first-
  derivative (Sobolev-type) penalty: the squared error of the velocity of the decoded curve that the model's
  one-step estimate ``x_t + (1 - t) v`` implies, which weighs errors in high frequencies by ``(pi k)^2``.

:func:`flow_matching_loss` is the loss written out (``tests/test_actions_policies.py`` checks it by hand).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from .codecs import dct_decode, dct_derivative, dct_encode, sample_times
from .data import Demo, from_unit, observation, raw_chunk, timed_chunk, to_unit

KINDS = ("bc", "flow")
REPRESENTATIONS = ("raw", "dct")


@dataclass(frozen=True)
class PolicyConfig:
    """What a policy predicts and how big it is."""

    kind: str = "flow"  # bc or flow
    representation: str = "raw"  # raw (chunk of `steps` samples) or dct (K coefficients over `horizon_s`)
    observation: str = "state"  # state or keypoints
    steps: int = 16  # raw chunk length (samples at the data's rate)
    horizon_s: float = 1.6  # dct chunk duration (seconds)
    coefficients: int = 8  # K of the dct representation
    execute: float = 0.5  # share of the chunk executed before predicting again
    sobolev: float = 0.0  # weight of the first-derivative penalty (dct only)
    hidden: int = 256
    depth: int = 3
    flow_steps: int = 10  # Euler steps when sampling

    @property
    def obs_dim(self) -> int:
        return 6 if self.observation == "state" else 20

    @property
    def target_dim(self) -> int:
        return 2 * (self.steps if self.representation == "raw" else self.coefficients)


def mlp(inputs: int, outputs: int, hidden: int, depth: int) -> nn.Sequential:
    """``depth`` hidden layers of ``hidden`` units with Mish activations."""
    layers: list[nn.Module] = []
    for i in range(depth):
        layers += [nn.Linear(inputs if i == 0 else hidden, hidden), nn.Mish()]
    return nn.Sequential(*layers, nn.Linear(hidden, outputs))


def time_features(t: torch.Tensor, n: int = 8) -> torch.Tensor:
    """Sinusoidal features of the flow time ``t`` (batch x 1)."""
    freqs = torch.arange(1, n + 1, dtype=t.dtype, device=t.device) * torch.pi
    return torch.cat([torch.sin(t * freqs), torch.cos(t * freqs)], dim=1)


def flow_matching_loss(velocity: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
                       x1: torch.Tensor, cond: torch.Tensor, x0: torch.Tensor, t: torch.Tensor,
                       derivative: torch.Tensor | None = None, sobolev: float = 0.0) -> torch.Tensor:
    """Conditional flow matching on the straight path, plus ``sobolev`` times the mean squared first-derivative
    error of the implied endpoint (``derivative``: a linear map from a target to its curve's derivative)."""
    xt = (1 - t) * x0 + t * x1
    target = x1 - x0
    predicted = velocity(xt, t, cond)
    loss = torch.mean((predicted - target) ** 2)
    if sobolev and derivative is not None:
        endpoint_error = (1 - t) * (predicted - target)  # (x_t + (1 - t) v) - x_1
        loss = loss + sobolev * torch.mean((endpoint_error @ derivative.T) ** 2)
    return loss


class Policy(nn.Module):
    """A chunking policy (see the module docstring); targets are normalised per dimension."""

    def __init__(self, config: PolicyConfig, mean: np.ndarray | None = None, std: np.ndarray | None = None):
        super().__init__()
        self.config = config
        extra = 0 if config.kind == "bc" else config.target_dim + 16
        self.net = mlp(config.obs_dim + extra, config.target_dim, config.hidden, config.depth)
        dim = config.target_dim
        self.register_buffer("mean", torch.zeros(dim) if mean is None else torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.ones(dim) if std is None else torch.as_tensor(std, dtype=torch.float32))
        self.register_buffer("derivative", self._derivative())

    def _derivative(self) -> torch.Tensor:
        """Normalised target -> the decoded curve's d/du at 16 points per dimension (dct; zeros otherwise)."""
        c = self.config
        if c.representation != "dct":
            return torch.zeros(1, c.target_dim)
        basis = dct_derivative(np.eye(c.coefficients), sample_times(16))  # (16, K)
        per_dim = np.kron(basis, np.eye(2))  # targets are K x 2 flattened row-major
        return torch.as_tensor(per_dim, dtype=torch.float32) * self.std

    # targets -------------------------------------------------------------------------------------------------
    def target(self, demo: Demo, i: int) -> np.ndarray:
        """The (unnormalised) training target at step ``i`` of ``demo``."""
        c = self.config
        if c.representation == "raw":
            return to_unit(raw_chunk(demo, i, c.steps)).reshape(-1)
        return dct_encode(to_unit(timed_chunk(demo, i, c.horizon_s)), c.coefficients).reshape(-1)

    def velocity(self, xt: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([cond, xt, time_features(t)], dim=1))

    def loss(self, cond: torch.Tensor, target: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """The training loss of a batch (targets unnormalised)."""
        x1 = (target - self.mean) / self.std
        if self.config.kind == "bc":
            return torch.mean((self.net(cond) - x1) ** 2)
        x0 = torch.randn(x1.shape, generator=generator, device=x1.device)
        t = torch.rand((len(x1), 1), generator=generator, device=x1.device)
        return flow_matching_loss(self.velocity, x1, cond, x0, t, self.derivative, self.config.sobolev)

    @torch.no_grad()
    def predict(self, cond: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Targets (unnormalised) for a batch of observations."""
        if self.config.kind == "bc":
            x = self.net(cond)
        else:
            x = torch.randn((len(cond), self.config.target_dim), generator=generator, device=cond.device)
            n = self.config.flow_steps
            for k in range(n):
                t = torch.full((len(cond), 1), k / n, device=cond.device)
                x = x + self.velocity(x, t, cond) / n
        return x * self.std + self.mean

    def act(self, states: np.ndarray, keypoints: np.ndarray | None, rate_hz: float,
            generator: torch.Generator | None = None) -> list[np.ndarray]:
        """For each observed state, the actions (pixels) to execute at ``rate_hz`` before predicting again."""
        c = self.config
        cond = torch.as_tensor(observation(states, keypoints, c.observation), dtype=torch.float32,
                               device=self.mean.device)
        targets = self.predict(cond, generator).cpu().numpy().astype(np.float64)
        plans = []
        for target in targets:
            if c.representation == "raw":
                chunk = target.reshape(c.steps, 2)
            else:
                chunk = dct_decode(target.reshape(c.coefficients, 2), max(2, round(c.horizon_s * rate_hz)))
            plans.append(from_unit(chunk[:max(1, round(len(chunk) * c.execute))]))
        return plans

    def checkpoint(self) -> dict:
        """What :func:`from_checkpoint` needs."""
        return {"config": asdict(self.config), "state_dict": self.state_dict()}


def from_checkpoint(payload: dict, device: str = "cpu") -> Policy:
    """The policy saved by :meth:`Policy.checkpoint`."""
    policy = Policy(PolicyConfig(**payload["config"]))
    policy.load_state_dict(payload["state_dict"])
    return policy.to(device).eval()
