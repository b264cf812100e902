"""Training either arm: the same batches, augmentations, optimiser and number of steps for both.

Loss: binary cross-entropy plus soft Dice on the final logits. Fractal-G adds half a cross-entropy on the
backbone's own logits, so the uncertainty that drives its router is that of a trained prediction (the plain
U-Net's final logits are the backbone's, so it gets the same loss without the extra term). AdamW with a cosine
schedule; batches drawn, flipped and rotated by one generator seeded from ``seed``, so both arms see the same
images in the same order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .data import Sample
from .model import Segmenter

AUX_WEIGHT = 0.5


@dataclass(frozen=True)
class FitConfig:
    """How long and how hard to train."""

    steps: int
    batch: int
    lr: float = 3e-3
    weight_decay: float = 1e-4


def soft_dice_loss(logits: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """1 - soft Dice of ``sigmoid(logits)`` against ``truth``, per image, averaged."""
    p = torch.sigmoid(logits).flatten(1)
    t = truth.flatten(1)
    return (1 - (2 * (p * t).sum(1) + 1) / (p.sum(1) + t.sum(1) + 1)).mean()


def loss_of(model: Segmenter, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The training loss of one batch (see the module's docstring)."""
    out, backbone = model(x)
    loss = F.binary_cross_entropy_with_logits(out, y) + soft_dice_loss(out, y)
    if model.plugin is not None:
        loss = loss + AUX_WEIGHT * F.binary_cross_entropy_with_logits(backbone, y)
    return loss


def _augment(x: torch.Tensor, y: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    k = int(torch.randint(0, 4, (), generator=gen))
    flip = bool(torch.randint(0, 2, (), generator=gen))
    x, y = torch.rot90(x, k, (-2, -1)), torch.rot90(y, k, (-2, -1))
    return (x.flip(-1), y.flip(-1)) if flip else (x, y)


def stack(samples: Sequence[Sample]) -> tuple[torch.Tensor, torch.Tensor]:
    """Images (N, 1, H, W) and truths (N, 1, H, W) as float tensors (all samples on one grid)."""
    images = torch.from_numpy(np.stack([s.image for s in samples]).astype(np.float32))[:, None]
    truths = torch.from_numpy(np.stack([s.truth for s in samples]).astype(np.float32))[:, None]
    return images, truths


def fit(model: Segmenter, samples: Sequence[Sample], config: FitConfig, seed: int, device: torch.device,
        progress: Callable[[int, int], None] | None = None) -> dict[str, object]:
    """Train ``model`` in place for ``config.steps`` optimiser steps; returns the steps, the loss every tenth of
    the run and the wall time."""
    images, truths = stack(samples)
    images, truths = images.to(device), truths.to(device)
    model.to(device).train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, max(1, config.steps))
    gen = torch.Generator().manual_seed(seed)
    curve, start = [], time.perf_counter()
    for step in range(config.steps):
        pick = torch.randint(0, images.shape[0], (config.batch,), generator=gen).to(device)
        x, y = _augment(images[pick], truths[pick], gen)
        loss = loss_of(model, x, y)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % max(1, config.steps // 10) == 0 or step == config.steps - 1:
            curve.append([step + 1, round(float(loss.detach()), 5)])
        if progress is not None:
            progress(step + 1, config.steps)
    model.eval()
    return {"train_steps": config.steps, "loss_curve": curve, "train_seconds": round(time.perf_counter() - start, 2)}
