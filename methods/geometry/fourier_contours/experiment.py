"""Fourier Contour Learning against a dense U-Net on generated cine stacks, at equal optimiser steps.

Per seed: phantom subjects split into training and test subjects (disjoint); training stacks at the scale's cine
frames, labelled as in :func:`.data.make_stacks` (masks on the ED/ES stacks of ``mask_subjects`` subjects only,
measured EDV/ESV for every training subject, other frames unlabeled). Arms, each ``steps`` Adam steps:

* ``fcl``: :class:`.model.FourierContourNet` with the mask, measurement and consistency losses (:mod:`.losses`);
  a step sees ``batch`` stacks with masks and ``batch`` without (volume-only or unlabeled);
* ``unet``: :class:`.unet.UNet` with BCE + soft Dice on the masked slices (all it can use), ``2 * batch`` masked
  stacks a step;
* ``unet_volume``: the same U-Net also given the measured volumes through its soft area (a stronger baseline
  than the paper's): ``batch`` masked stacks plus ``batch`` volume-only stacks a step.

Scores on every test stack (items paired across arms): absolute volume error (ml) against the disc summation of
the exact slice areas, and Dice of the rendered contour / thresholded mask against the truth mask (mean over the
stack's slices).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from .. import phantom
from . import losses, measures, unet
from .data import Grid, Stacks, make_stacks
from .model import FCLConfig, FourierContourNet

ED, ES = 0, phantom.ES_FRAME


@dataclass(frozen=True)
class Setting:
    """One scale: data sizes, label budget, network sizes and optimisation."""

    grid: Grid
    train_subjects: int
    mask_subjects: int
    test_subjects: int
    frames: tuple[int, ...]
    steps: int
    batch: int
    model: FCLConfig = field(default_factory=FCLConfig)
    unet_levels: int = 3
    lr: float = 1e-3
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)  # mask, measurement, consistency


SETTINGS: dict[str, Setting] = {
    "tiny": Setting(Grid(24, 4.0), train_subjects=4, mask_subjects=1, test_subjects=2, frames=(ED, 4, ES),
                    steps=10, batch=1, model=FCLConfig(width=8, dim=32, levels=2, harmonics=4, decoder_layers=1)),
    "default": Setting(Grid(32, 3.0), train_subjects=32, mask_subjects=6, test_subjects=16,
                       frames=(ED, 4, ES, 12, 16), steps=300, batch=1,
                       model=FCLConfig(width=12, dim=64, levels=2, harmonics=6)),
    "large": Setting(Grid(64, 1.5), train_subjects=240, mask_subjects=40, test_subjects=60,
                     frames=tuple(range(0, phantom.FRAMES, 2)), steps=6000, batch=8,
                     model=FCLConfig(width=32, dim=128, levels=3, harmonics=10, decoder_layers=3, slice_layers=2),
                     unet_levels=4),
}
ARMS = ("fcl", "unet", "unet_volume")
Progress = Callable[[int, int], None]


def training_stacks(setting: Setting, seed: int) -> Stacks:
    """The labelled, partly labelled and unlabeled training stacks of subjects ``0 .. train_subjects - 1``."""
    return make_stacks(list(range(setting.train_subjects)), list(setting.frames), setting.grid,
                       setting.model.harmonics, seed=seed, mask_subjects=set(range(setting.mask_subjects)),
                       volume_frames=(ED, ES))


def test_stacks(setting: Setting, seed: int) -> Stacks:
    """The held-out stacks: the next ``test_subjects`` subjects, never seen in training."""
    n = setting.train_subjects
    return make_stacks(list(range(n, n + setting.test_subjects)), list(setting.frames), setting.grid,
                       setting.model.harmonics, seed=seed)


def volume_ml(areas_norm: torch.Tensor, valid: torch.Tensor, grid: Grid) -> torch.Tensor:
    """Disc-summation volume (ml) of normalised slice areas."""
    return measures.volume(areas_norm * grid.half ** 2, valid, phantom.SLICE) / 1000


class Batches:
    """Random stacks for each step: from those with masks and from those without, seeded."""

    def __init__(self, train: Stacks, seed: int) -> None:
        self.masked = torch.nonzero(train.has_mask).squeeze(1)
        self.volume_only = torch.nonzero(train.has_volume & ~train.has_mask).squeeze(1)
        self.unmasked = torch.nonzero(~train.has_mask).squeeze(1)
        self.generator = torch.Generator().manual_seed(seed)

    def draw(self, pool: torch.Tensor, k: int) -> torch.Tensor:
        """``k`` stacks of ``pool`` at random (with replacement when the pool is smaller)."""
        return pool[torch.randint(0, len(pool), (k,), generator=self.generator)]


def _optimiser(model: torch.nn.Module, setting: Setting) -> tuple[torch.optim.Optimizer, Any]:
    opt = torch.optim.AdamW(model.parameters(), lr=setting.lr, weight_decay=1e-4)
    warm = max(1, setting.steps // 10)

    def factor(step: int) -> float:  # linear warm-up, then cosine decay to a tenth
        if step < warm:
            return (step + 1) / warm
        return 0.1 + 0.45 * (1 + math.cos(math.pi * (step - warm) / max(1, setting.steps - warm)))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


def fit_fcl(train: Stacks, setting: Setting, seed: int, device: torch.device,
            progress: Progress | None = None) -> tuple[FourierContourNet, list[dict[str, float]]]:
    """Train Fourier Contour Learning for ``setting.steps`` steps; returns the model and a loss log."""
    torch.manual_seed(seed)
    model = FourierContourNet(setting.model).to(device)
    opt, sched = _optimiser(model, setting)
    batches, grid = Batches(train, seed), setting.grid
    pixel_area = (grid.pixel / grid.half) ** 2
    w_mask, w_volume, w_consistency = setting.weights
    log = []
    for step in range(setting.steps):
        idx = torch.cat([batches.draw(batches.masked, setting.batch), batches.draw(batches.unmasked, setting.batch)])
        part = train.take(idx).to(device)
        centres, coefficients = model(part.images, part.depth, part.valid)
        c, k = centres[:, :, 0], coefficients[:, :, 0]
        volumes = volume_ml(measures.area(k), part.valid, grid)
        terms = {"mask": losses.mask_loss(c, k, part, pixel_area),
                 "measurement": losses.measurement_loss(volumes, part),
                 "consistency": losses.consistency_loss(model, part, batches.generator, grid.pixel, grid.half)}
        loss = w_mask * terms["mask"] + w_volume * terms["measurement"] + w_consistency * terms["consistency"]
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        log.append({k: float(v.detach()) for k, v in terms.items()})
        if progress:
            progress(step + 1, setting.steps)
    return model.eval(), log


def fit_unet(train: Stacks, setting: Setting, seed: int, device: torch.device, *, use_volumes: bool = False,
             progress: Progress | None = None) -> tuple[unet.UNet, list[dict[str, float]]]:
    """Train the dense U-Net for ``setting.steps`` steps on the masked slices (and the volumes if asked)."""
    torch.manual_seed(seed)
    model = unet.UNet(setting.model.width, setting.unet_levels).to(device)
    opt, sched = _optimiser(model, setting)
    batches, grid = Batches(train, seed), setting.grid
    log = []
    for step in range(setting.steps):
        masked = batches.draw(batches.masked, setting.batch if use_volumes else 2 * setting.batch)
        others = batches.draw(batches.volume_only, setting.batch) if use_volumes else masked[:0]
        part = train.take(torch.cat([masked, others])).to(device)
        logits = torch.zeros(part.valid.shape + part.images.shape[-2:], device=device)
        logits[part.valid] = model(part.images[part.valid].unsqueeze(1))
        sel = part.valid & part.has_mask[:, None]
        truth, prob = part.masks[sel].float(), torch.sigmoid(logits[sel])
        dice = 1 - (2 * (prob * truth).flatten(1).sum(1) + 1) / (prob.flatten(1).sum(1) + truth.flatten(1).sum(1) + 1)
        terms = {"mask": F.binary_cross_entropy_with_logits(logits[sel], truth) + dice.mean()}
        if use_volumes:
            soft_area = torch.sigmoid(logits).flatten(2).sum(-1) * (grid.pixel / grid.half) ** 2
            terms["measurement"] = losses.measurement_loss(volume_ml(soft_area, part.valid, grid), part)
        loss = sum(terms.values())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        log.append({k: float(v.detach()) for k, v in terms.items()})
        if progress:
            progress(step + 1, setting.steps)
    return model.eval(), log


def dice(pred: np.ndarray, truth: np.ndarray) -> float:
    """Dice of two boolean masks (1 when both are empty)."""
    total = pred.sum() + truth.sum()
    return 1.0 if total == 0 else float(2 * (pred & truth).sum() / total)


@torch.no_grad()
def predict(model: torch.nn.Module, test: Stacks, grid: Grid, device: torch.device,
            chunk: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Predicted volumes ``(N,)`` (ml) and masks ``(N, S, H, W)`` of every test stack."""
    vols, masks = [], []
    for start in range(0, len(test), chunk):
        part = test.take(torch.arange(start, min(start + chunk, len(test)))).to(device)
        pred_masks = np.zeros(tuple(part.masks.shape), bool)
        if isinstance(model, FourierContourNet):
            centres, coefficients = model(part.images, part.depth, part.valid)
            c, k = centres[:, :, 0], coefficients[:, :, 0]
            vols.append(volume_ml(measures.area(k), part.valid, grid).cpu().numpy())
            outline = (measures.points(c, k, 128) * grid.half).cpu().numpy()
            for i, j in zip(*np.nonzero(part.valid.cpu().numpy()), strict=True):
                pred_masks[i, j] = measures.rasterise(outline[i, j], grid.size, grid.pixel)
        else:
            logits = model(part.images[part.valid].unsqueeze(1))
            pred_masks[part.valid.cpu().numpy()] = (logits > 0).cpu().numpy()
            area = torch.as_tensor(pred_masks, dtype=torch.float32).flatten(2).sum(-1) * grid.pixel ** 2
            vols.append((measures.volume(area, part.valid.cpu(), phantom.SLICE) / 1000).numpy())
        masks.append(pred_masks)
    return np.concatenate(vols), np.concatenate(masks)


def score(model: torch.nn.Module, test: Stacks, grid: Grid, device: torch.device) -> dict[str, Any]:
    """Per test stack: absolute and relative volume error and mean slice Dice; per test subject: EF error."""
    vols, masks = predict(model, test, grid, device)
    truth, valid, true_masks = test.volumes.numpy(), test.valid.numpy(), test.masks.numpy()
    dices = [float(np.mean([dice(masks[i, j], true_masks[i, j]) for j in np.nonzero(valid[i])[0]]))
             for i in range(len(test))]
    frame, subject = test.frame.numpy(), test.subject.numpy()
    ef_errors = []
    for sid in np.unique(subject):
        ed, es = (np.nonzero((subject == sid) & (frame == f))[0] for f in (ED, ES))
        if len(ed) and len(es):
            ef = 100 * (vols[ed[0]] - vols[es[0]]) / max(vols[ed[0]], 1e-6)
            ef_true = 100 * (truth[ed[0]] - truth[es[0]]) / truth[ed[0]]
            ef_errors.append(float(abs(ef - ef_true)))
    abs_err = np.abs(vols - truth)
    return {"volume_abs_error": abs_err.tolist(), "volume_rel_error": (abs_err / truth).tolist(), "dice": dices,
            "ef_abs_error": ef_errors}


def run_seed(scale: str, seed: int, device: torch.device, arms: tuple[str, ...] = ARMS,
             progress: Progress | None = None) -> dict[str, Any]:
    """Train every arm on one seed's data and score it: ``{arm: {per-item scores, outputs_per_slice, ...}}``
    plus ``models`` (the trained modules) and ``setting``."""
    setting = SETTINGS[scale]
    train, test = training_stacks(setting, seed), test_stacks(setting, seed)
    total, done = setting.steps * len(arms), [0]

    def tick(step: int, _steps: int) -> None:
        if progress:
            progress(done[0] + step, total)

    out: dict[str, Any] = {"models": {}, "setting": asdict(setting)}
    for arm in arms:
        start = time.perf_counter()
        if arm == "fcl":
            model, log = fit_fcl(train, setting, seed, device, tick)
            per_slice = model.outputs_per_slice
        else:
            model, log = fit_unet(train, setting, seed, device, use_volumes=arm == "unet_volume", progress=tick)
            per_slice = unet.outputs_per_slice(setting.grid.size)
        done[0] += setting.steps
        out[arm] = {**score(model, test, setting.grid, device), "outputs_per_slice": per_slice,
                    "parameters": sum(p.numel() for p in model.parameters()), "train_steps": setting.steps,
                    "final_loss": log[-1], "seconds": round(time.perf_counter() - start, 1)}
        out["models"][arm] = model
    out["labels"] = {"train_stacks": len(train), "stacks_with_masks": int(train.has_mask.sum()),
                     "stacks_with_volume_only": int((train.has_volume & ~train.has_mask).sum()),
                     "unlabeled_stacks": int((~train.has_volume).sum()), "test_stacks": len(test)}
    return out
