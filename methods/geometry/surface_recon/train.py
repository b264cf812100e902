"""``neurips26 geometry train surface``: unposed surface reconstruction, trained on some real meshes and scored on
the others beside its ablation at equal steps and the untrained baselines.

Writes ``out/checkpoint.pt`` (both trained ray regressors, the configuration, the split and the mesh folder) and
``out/metrics.json`` (one row per arm: Chamfer-L1, F-score at 1% of the diagonal, normal consistency, accuracy,
completeness, optimiser steps). ``neurips26 geometry eval --trained DIR`` re-scores the folder on the same
held-out scenes (:func:`evaluate_checkpoint`).

Scales: ``tiny`` (seconds on a CPU: proves it runs), ``default`` (minutes on a CPU), ``large`` (the same code on a
GPU: more views, pixels, scenes and steps, a wider regressor).
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
from ..training import GEOMETRY_METHODS, read_checkpoint
from ..training import device as pick_device
from .experiment import MESHES, ScaleConfig, load_meshes, run, scale_config, scenes, score_scenes, split
from .pipeline import BASELINE, METHOD, TRAINED
from .ray_regressor import RayRegressor

METRICS = ("chamfer_l1", "fscore", "normal_consistency", "accuracy", "completeness")


def data_description(config: ScaleConfig, folder: Path, train_names: list[str], test_names: list[str]
                     ) -> dict[str, Any]:
    """Which parts of a run are real (the meshes) and which are generated (renders, cameras, prior noise)."""
    return {"real": {"meshes": str(folder), "train": train_names, "test": test_names,
                     "source": "../shared/data/meshes: trimesh's models (MIT), the Stanford bunny; the surface "
                               "truth is sampled on them"},
            "generated": {"renders": f"{config.views} views of {config.size}x{config.size} pixels per scene from "
                                     "random cameras (z-buffer rasteriser), poses hidden from the method",
                          "pointmap_prior": "stand-in for a pretrained pointmap model: the renderer's depth and "
                                            "poses with generated noise", "noise": asdict(config.noise)}}


def rows(scored: dict[str, list[dict[str, float]]], steps: int) -> list[dict[str, Any]]:
    """One row per arm: the mean of each metric over the held-out scenes and the arm's optimiser steps."""
    return [{"arm": arm, **{m: float(np.mean([s[m] for s in per_scene])) for m in METRICS},
             "scenes": len(per_scene), "train_steps": steps if arm in TRAINED else 0}
            for arm, per_scene in scored.items()]


def _metrics(scale: str, seed: int, dev: torch.device, config: ScaleConfig, folder: Path, result: dict[str, Any]
             ) -> dict[str, Any]:
    return {"method": METHOD, "scale": scale, "seed": seed, "device": str(dev),
            "data": data_description(config, folder, result["train"], result["test"]), "config": config.dict(),
            "baseline": f"{BASELINE}: the same ray regressor over every view's surfels, without surfel voting or "
                        "raylet refinement, same steps; pointmap_only, convex_hull and sdf_mc are untrained",
            "rows": rows(result["scores"], config.steps),
            "per_scene": {arm: [{"mesh": name, **s} for name, s in zip(result["scenes"], per, strict=True)]
                          for arm, per in result["scores"].items()},
            "reference_views": result.get("references"),
            "loss_curves": {arm: r.get("loss_curve") for arm, r in result.get("reports", {}).items()}}


def load(out: Path) -> tuple[dict[str, Any], dict[str, RayRegressor]]:
    """A trained folder's checkpoint and its two ray regressors; GeometryError when it is not one."""
    checkpoint = read_checkpoint(out, METHOD)
    config = ScaleConfig.from_dict(checkpoint["config"])
    models = {}
    for arm in TRAINED:
        models[arm] = RayRegressor(config.model)
        models[arm].load_state_dict(checkpoint["arms"][arm])
        models[arm].eval()
    return checkpoint, models


def evaluate_checkpoint(out: Path, device: str = "auto") -> dict[str, Any]:
    """Re-score a trained folder: every arm on the same held-out scenes (rebuilt from the recorded meshes, split
    and seed), in ``metrics.json``'s shape."""
    checkpoint, models = load(out)
    config = ScaleConfig.from_dict(checkpoint["config"])
    folder = Path(checkpoint["meshes"])
    meshes = load_meshes(folder)
    seed = int(checkpoint["seed"])
    train_names, test_names = split(list(meshes), config, seed)
    if test_names != checkpoint["test"]:
        raise GeometryError(f"{folder}: its meshes no longer give the recorded held-out set {checkpoint['test']}")
    dev = pick_device(device)
    test = scenes(meshes, test_names, config, seed, config.test_scenes, stream=1)
    scored = score_scenes({arm: m.to(dev) for arm, m in models.items()}, test, dev)
    result = {"scores": scored, "train": train_names, "test": test_names, "scenes": [s.name for s in test],
              "references": [[list(v.references) for v in s.votes] for s in test]}
    return _metrics(checkpoint["scale"], seed, dev, config, folder, result)


@GEOMETRY_METHODS.register(METHOD, family="surfaces", evaluate=evaluate_checkpoint,
                           summary="Unposed surface reconstruction (pointmap prior, query-view-centric surfel "
                                   "voting, cross-attention ray regressor, raylet refinement) vs the regressor "
                                   "alone at equal steps")
def train(scale: str, out: Path, *, seed: int = 0, device: str = "auto",
          progress: Callable[[int, int], None] | None = None, meshes: Path | None = None) -> dict[str, Any]:
    """Train both ray regressors at ``scale`` on some of the real meshes (``meshes``, default
    ``../shared/data/meshes``), score every arm on the held-out ones, write ``out/checkpoint.pt`` and
    ``out/metrics.json``, and return the metrics."""
    config = scale_config(scale)
    dev = pick_device(device)
    folder = Path(meshes) if meshes is not None else MESHES
    result = run(config, seed, dev, load_meshes(folder), progress)
    metrics = _metrics(scale, seed, dev, config, folder, result)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"method": METHOD, "scale": scale, "seed": seed, "config": config.dict(),
                "meshes": str(folder.resolve()), "train": result["train"], "test": result["test"],
                "arms": {arm: model.cpu().state_dict() for arm, model in result["models"].items()}},
               out / "checkpoint.pt")
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    return metrics

