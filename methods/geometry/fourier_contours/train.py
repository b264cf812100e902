"""``neurips26 geometry train fourier-contours``: Fourier Contour Learning beside the dense U-Net baselines.

Trains the three arms of :mod:`.experiment` on one seed's generated cine stacks, writes ``checkpoint.pt`` (every
arm's weights, the scale and seed) and ``metrics.json`` (one row per arm: volume error, Dice, EF error, output
numbers per slice, parameters, optimiser steps). ``neurips26 geometry eval --trained DIR`` re-scores the saved
weights on the same held-out stacks (regenerated from the seed: the phantom is deterministic).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..core import GeometryError
from ..training import GEOMETRY_METHODS, SCALES, read_checkpoint
from ..training import device as pick_device
from . import experiment, unet
from .model import FourierContourNet

DATA = ("generated: cine stacks of the cardiac phantom (methods/geometry/phantom.py) rendered as short-axis images "
        "with exact truth masks, slice areas and volumes (disc summation of the exact areas); nothing real. "
        "Training labels: masks on the ED/ES stacks of a few subjects, measured EDV/ESV for every training subject, "
        "other frames unlabeled; test subjects held out")
DESCRIPTION = {"fcl": "Fourier Contour Learning (masks + volumes + unlabeled consistency)",
               "unet": "dense U-Net (masks)", "unet_volume": "dense U-Net (masks + volumes via soft area)"}


def rows(scored: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per arm: the means of its per-item scores beside its sizes."""
    out = []
    for arm, s in scored.items():
        out.append({"arm": arm, "description": DESCRIPTION[arm],
                    "volume_abs_error_ml": float(np.mean(s["volume_abs_error"])),
                    "volume_rel_error": float(np.mean(s["volume_rel_error"])), "dice": float(np.mean(s["dice"])),
                    "ef_abs_error": float(np.mean(s["ef_abs_error"])) if s["ef_abs_error"] else None,
                    "outputs_per_slice": s["outputs_per_slice"], "parameters": s["parameters"],
                    "train_steps": s["train_steps"]})
    return out


def _metrics(scale: str, seed: int, device: torch.device, scored: dict[str, dict[str, Any]],
             labels: dict[str, int] | None) -> dict[str, Any]:
    return {"method": "fourier-contours", "scale": scale, "seed": seed, "device": str(device), "data": DATA,
            "labels": labels, "metric": "volume_abs_error_ml (lower is better), per held-out stack",
            "rows": rows(scored)}


def evaluate_checkpoint(out: Path, device: str = "auto") -> dict[str, Any]:
    """Re-score a trained folder's arms on the held-out stacks of its scale and seed (same shape as ``train``)."""
    path = Path(out) / "checkpoint.pt"
    ckpt = read_checkpoint(out, "fourier-contours")
    scale, seed = ckpt.get("scale"), ckpt.get("seed")
    if scale not in experiment.SETTINGS:
        raise GeometryError(f"{path}: unknown scale {scale!r}")
    setting = experiment.SETTINGS[scale]
    if json.loads(json.dumps(asdict(setting))) != json.loads(json.dumps(ckpt["setting"])):
        raise GeometryError(f"{path}: trained with other {scale} settings than this version's; train it again")
    dev = pick_device(device)
    test = experiment.test_stacks(setting, seed)
    scored = {}
    for arm, state in ckpt["arms"].items():
        model = (FourierContourNet(setting.model) if arm == "fcl"
                 else unet.UNet(setting.model.width, setting.unet_levels))
        model.load_state_dict(state)
        model.to(dev).eval()
        per_slice = model.outputs_per_slice if arm == "fcl" else unet.outputs_per_slice(setting.grid.size)
        scored[arm] = {**experiment.score(model, test, setting.grid, dev), "outputs_per_slice": per_slice,
                       "parameters": sum(p.numel() for p in model.parameters()), "train_steps": setting.steps}
    return _metrics(scale, seed, dev, scored, None)


@GEOMETRY_METHODS.register("fourier-contours", family="contours", evaluate=evaluate_checkpoint,
                           summary="Fourier Contour Learning (anatomy queries, cross-slice attention, closed-form "
                                   "volumes) vs a dense U-Net")
def train(scale: str, out: Path, *, seed: int = 0, device: str = "auto",
          progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Train Fourier Contour Learning and the U-Net baselines at ``scale``; write ``out/checkpoint.pt`` and
    ``out/metrics.json`` (the arms' held-out volume error, Dice, EF error and output sizes)."""
    if scale not in SCALES:
        raise GeometryError(f"--scale {scale!r}: use one of {', '.join(SCALES)}")
    dev = pick_device(device)
    result = experiment.run_seed(scale, seed, dev, progress=progress)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    states = {arm: {k: v.detach().cpu() for k, v in model.state_dict().items()}
              for arm, model in result["models"].items()}
    torch.save({"method": "fourier-contours", "scale": scale, "seed": seed, "setting": result["setting"],
                "arms": states}, out / "checkpoint.pt")
    metrics = _metrics(scale, seed, dev, {arm: result[arm] for arm in result["models"]}, result["labels"])
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    return metrics
