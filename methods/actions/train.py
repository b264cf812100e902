"""Training a chunking policy on demonstrations, with its cost (time, peak memory, final loss)."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from neurips26 import models

from .data import Demo, pairs
from .policies import Policy, PolicyConfig, from_checkpoint

METHODS: dict[str, dict] = {
    "bc": {"kind": "bc", "representation": "raw"},
    "flow_raw": {"kind": "flow", "representation": "raw"},
    "fafm": {"kind": "flow", "representation": "dct", "sobolev": 0.1},
}
"""The compared methods: the behaviour-cloning MLP, flow matching on raw chunks, and FAFM (flow matching on DCT
coefficients with the first-derivative penalty)."""


@dataclass
class Cost:
    """What training took."""

    method: str
    steps: int
    examples: int
    seconds: float
    peak_memory_mb: float  # CUDA peak when on the GPU, else the process's peak resident memory
    final_loss: float
    device: str

    def as_dict(self) -> dict:
        return asdict(self)


def dataset(policy: Policy, demos: list[Demo]) -> tuple[np.ndarray, np.ndarray]:
    """(observations, targets) of every step of ``demos``."""
    observations, where = pairs(demos, policy.config.observation)
    targets = np.stack([policy.target(demos[d], i) for d, i in where])
    return observations.astype(np.float32), targets.astype(np.float32)


def train(method: str, demos: list[Demo], *, steps: int = 2000, batch_size: int = 256, lr: float = 1e-3,
          seed: int = 0, device: str | None = None, advance: Callable[[int], None] | None = None,
          threads: int | None = 1, every: int = 0, checkpoint: Callable[[int, Policy], None] | None = None,
          **overrides) -> tuple[Policy, Cost]:
    """Train ``method`` (a key of :data:`METHODS`, with ``overrides`` of its :class:`PolicyConfig`) on ``demos``.

    ``threads``: CPU threads for torch (None: torch's default). The policies are small MLPs, for which one thread
    is fastest; more threads on a busy machine can be many times slower. ``checkpoint(step, policy)`` is called
    (the policy in eval mode) every ``every`` steps, for a learning curve.
    """
    device = models.device(device)
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    config = PolicyConfig(**{**METHODS[method], **overrides})
    observations, targets = dataset(Policy(config), demos)
    policy = Policy(config, targets.mean(axis=0), targets.std(axis=0) + 1e-6).to(device)
    cost = fit(policy, observations, targets, method=method, steps=steps, batch_size=batch_size, lr=lr, seed=seed,
               advance=advance, every=every, checkpoint=checkpoint)
    return policy.eval(), cost


def finetune(policy: Policy, demos: list[Demo], *, steps: int, batch_size: int = 256, lr: float = 3e-4,
             seed: int = 0, method: str = "finetune") -> Cost:
    """Go on training ``policy`` on ``demos`` (its target normalisation kept) for ``steps`` steps; the cost."""
    observations, targets = dataset(policy, demos)
    cost = fit(policy, observations, targets, method=method, steps=steps, batch_size=batch_size, lr=lr, seed=seed)
    policy.eval()
    return cost


def fit(policy: Policy, observations: np.ndarray, targets: np.ndarray, *, method: str, steps: int,
        batch_size: int = 256, lr: float = 1e-3, seed: int = 0, advance: Callable[[int], None] | None = None,
        every: int = 0, checkpoint: Callable[[int, Policy], None] | None = None) -> Cost:
    """``steps`` AdamW steps (cosine schedule) of ``policy``'s loss on random batches of (observation, target)."""
    device = str(policy.mean.device).split(":")[0]
    obs_t, tgt_t = torch.as_tensor(observations, device=device), torch.as_tensor(targets, device=device)
    optimiser = torch.optim.AdamW(policy.parameters(), lr=lr, weight_decay=1e-6)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, steps)
    generator = torch.Generator(device=device).manual_seed(seed)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    start, losses = time.perf_counter(), []
    policy.train()
    for step in range(1, steps + 1):
        index = torch.randint(len(obs_t), (batch_size,), generator=generator, device=device)
        loss = policy.loss(obs_t[index], tgt_t[index], generator)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        schedule.step()
        losses.append(loss.item())
        if advance:
            advance(1)
        if checkpoint and every and step % every == 0:
            checkpoint(step, policy.eval())
            policy.train()
    seconds = time.perf_counter() - start
    peak = (torch.cuda.max_memory_allocated() / 2**20 if device == "cuda"
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return Cost(method, steps, len(obs_t), seconds, peak, float(np.mean(losses[-50:])), device)


def save(policy: Policy, path: Path, **info) -> Path:
    """Save a policy with ``info`` (training cost, data) beside its weights."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({**policy.checkpoint(), "info": info}, path)
    return path


def load(path: Path, device: str | None = None) -> tuple[Policy, dict]:
    """A saved policy and its info."""
    payload = torch.load(path, map_location=models.device(device), weights_only=False)
    return from_checkpoint(payload, models.device(device)), payload.get("info", {})
