"""``neurips26 geometry train fractal-g``: the U-Net with and without Fractal-G, trained at equal steps.

Both arms are the same U-Net (same initial weights, batches and steps); the method's arm carries the plug-in.
They are scored on held-out shapes at the training grid and at 0.5x and 2x (cross-resolution), beside the two
classical baselines of :mod:`..segdata` (Otsu, morphological Chan-Vese). ``data=DIR`` (Python) trains and scores
on a folder of image/mask PNGs instead of the generated shapes (:mod:`.data` gives the layout).

Scales: ``tiny`` (seconds on a CPU: proves it runs), ``default`` (minutes on a CPU), ``large`` (the same code on a
GPU: wider networks, a finer grid, more shapes and steps).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from ..core import GeometryError
from ..training import GEOMETRY_METHODS, SCALES, read_checkpoint
from ..training import device as pick_device
from .data import SegmentationSet, folder, generated
from .fit import FitConfig, fit
from .model import ModelConfig, Segmenter
from .scoring import row, score_classical, score_model

METHOD, BASELINE = "fractal-g", "unet"
TEST_SCALES = (0.5, 1.0, 2.0)
CLASSICAL = ("otsu", "active_contour")


@dataclass(frozen=True)
class ScaleConfig:
    """One scale's data, training and model sizes."""

    size: int  # training grid, pixels a side (field of view 64 mm)
    n_train: int
    n_test: int
    steps: int
    batch: int
    model: ModelConfig


SCALE_CONFIGS = {
    "tiny": ScaleConfig(size=32, n_train=16, n_test=4, steps=8, batch=4, model=ModelConfig(base=8, dim=16)),
    "default": ScaleConfig(size=64, n_train=96, n_test=24, steps=200, batch=8, model=ModelConfig(base=8, dim=16)),
    "large": ScaleConfig(size=96, n_train=2000, n_test=96, steps=4000, batch=16,
                         model=ModelConfig(base=32, dim=64, rounds=3)),
}


def scale_config(scale: str) -> ScaleConfig:
    """The configuration of ``scale``; GeometryError for an unknown one."""
    if scale not in SCALE_CONFIGS:
        raise GeometryError(f"--scale {scale!r}: use one of {', '.join(SCALES)}")
    return SCALE_CONFIGS[scale]


def dataset(config: ScaleConfig, data: Path | None = None, train: bool = True) -> SegmentationSet:
    """The generated shapes (``train=False``: the held-out ones only) or ``data``'s image/mask pairs."""
    if data is not None:
        return folder(Path(data), config.size, TEST_SCALES)
    return generated(config.n_train if train else 0, config.n_test, config.size, TEST_SCALES)


def build(config: ModelConfig, fractal_g: bool, seed: int) -> Segmenter:
    """A fresh segmenter; both arms built with one seed start from the same backbone weights."""
    torch.manual_seed(seed)
    return Segmenter(config, fractal_g)


def train_arms(config: ScaleConfig, data: SegmentationSet, seed: int, device: torch.device,
               progress: Callable[[int, int], None] | None = None) -> dict[str, tuple[Segmenter, dict[str, Any]]]:
    """Both arms trained on ``data`` for the same steps, batches and seed: ``{arm: (model, fit report)}``."""
    fit_config = FitConfig(steps=config.steps, batch=config.batch)
    arms = {}
    for k, (arm, plugged) in enumerate(((METHOD, True), (BASELINE, False))):
        model = build(config.model, plugged, seed)
        report = fit(model, data.train, fit_config, seed, device,
                     None if progress is None else (lambda d, t, k=k: progress(k * t + d, 2 * t)))
        arms[arm] = (model, report)
    return arms


def _metrics(scale: str, seed: int, dev: torch.device, data: SegmentationSet, config: ScaleConfig,
             scored: dict[str, dict[str, Any]], fits: dict[str, dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for arm, result in scored.items():
        r = row(arm, result)
        if arm in fits:
            r.update({"train_steps": fits[arm]["train_steps"], "train_seconds": fits[arm].get("train_seconds")})
        rows.append(r)
    return {"method": METHOD, "scale": scale, "seed": seed, "device": str(dev), "data": data.describe(),
            "config": asdict(config), "baseline": f"{BASELINE} (same backbone, same steps)", "rows": rows,
            "loss_curves": {arm: f.get("loss_curve") for arm, f in fits.items()}}


def load(out: Path) -> tuple[dict[str, Any], dict[str, Segmenter]]:
    """A trained folder's checkpoint and its two segmenters; GeometryError when it is not one."""
    checkpoint = read_checkpoint(out, METHOD)
    model_config = ModelConfig(**checkpoint["config"]["model"])
    models = {}
    for arm, plugged in ((METHOD, True), (BASELINE, False)):
        models[arm] = Segmenter(model_config, plugged)
        models[arm].load_state_dict(checkpoint["arms"][arm])
    return checkpoint, models


def evaluate_checkpoint(out: Path, device: str = "auto") -> dict[str, Any]:
    """Re-score a trained folder: both arms and the classical baselines on the same held-out set (regenerated,
    or re-read from the recorded folder), in ``metrics.json``'s shape."""
    checkpoint, models = load(out)
    raw = dict(checkpoint["config"])
    config = ScaleConfig(**{**raw, "model": ModelConfig(**raw["model"])})
    data_dir = checkpoint.get("data")
    if data_dir is not None and not Path(data_dir).is_dir():
        raise GeometryError(f"{out}: trained on {data_dir}, which is no longer there")
    dev = pick_device(device)
    sets = dataset(config, None if data_dir is None else Path(data_dir), train=False)
    scored = {arm: score_model(model, sets, dev) for arm, model in models.items()}
    scored.update({name: score_classical(name, sets) for name in CLASSICAL})
    return _metrics(checkpoint["scale"], checkpoint["seed"], dev, sets, config, scored, {})


@GEOMETRY_METHODS.register(METHOD, family="segmentation", evaluate=evaluate_checkpoint,
                           summary="Fractal-G plug-in (fission router, area-aware graph, implicit renderer) on a "
                                   "small U-Net, vs the plain U-Net at equal steps")
def train(scale: str, out: Path, *, seed: int = 0, device: str = "auto",
          progress: Callable[[int, int], None] | None = None, data: Path | None = None) -> dict[str, Any]:
    """Train the U-Net with and without Fractal-G at ``scale`` on the generated shapes (or ``data``, a folder of
    ``images/`` and ``masks/`` PNGs), score both and the classical baselines at 0.5x, 1x and 2x the training grid,
    write ``out/checkpoint.pt`` and ``out/metrics.json``, and return the metrics."""
    config = scale_config(scale)
    dev = pick_device(device)
    sets = dataset(config, data)
    arms = train_arms(config, sets, seed, dev, progress)
    scored = {arm: score_model(model, sets, dev) for arm, (model, _) in arms.items()}
    scored.update({name: score_classical(name, sets) for name in CLASSICAL})
    metrics = _metrics(scale, seed, dev, sets, config, scored, {arm: rep for arm, (_, rep) in arms.items()})
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"method": METHOD, "scale": scale, "seed": seed, "config": asdict(config),
                "data": None if data is None else str(Path(data).resolve()),
                "arms": {arm: model.cpu().state_dict() for arm, (model, _) in arms.items()}}, out / "checkpoint.pt")
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    return metrics
