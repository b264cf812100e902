"""Train Time2Track and the generic motion-diffusion baseline on the same subjects, at equal optimiser steps
(``neurips26 geometry train time2track``), and score both on held-out subjects with the motion metrics.

Per seed: :func:`.data.cohort` draws the subjects (real ECG, generated delays and kinematics) and a 70/30 split.

1. Electrical activations on the ECG's wavelet QRS bands; on the training subjects, the EMD that aligns them
   with the motion (:func:`.wavelet.recover_delay`); the learnable wavelet and the EMD head learn to predict it
   from the ECG alone (``delay_steps`` Adam steps).
2. Time2Track: the conditional motion diffusion model on the delay-aware tokens, ``diffusion_steps`` steps.
3. The generic baseline: the same model on absolute-time tokens, ``delay_steps + diffusion_steps`` steps, so
   both arms receive the same number of optimiser steps.

Each held-out subject gets one DDIM sample per arm from the same seeded noise. Rows: both arms and the
population-mean motion, scored by :func:`..motion.scores` (skill over the population mean, collapse ratio,
specificity, ...), plus the delay: the correlation of the EMD read from held-out ECGs with the planted one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from neurips26.output import jsonable
from neurips26.settings import REPO_ROOT

from .. import motion
from ..core import GeometryError
from ..training import GEOMETRY_METHODS, read_checkpoint, read_metrics
from ..training import device as pick_device
from . import data
from .baseline import GenericMotionDiffusion
from .diffusion import ConditionalMotionDiffusion, fit
from .tokens import delay_aware_features
from .wavelet import DelayModel, fit_delay, recover_delay

ECG = REPO_ROOT.parent / "shared" / "data" / "ecg"
ARMS = ("time2track", "generic_diffusion")


@dataclass(frozen=True)
class Scale:
    """How big a run is: subjects, optimiser steps of each stage, the denoiser's size."""

    subjects: int
    delay_steps: int
    diffusion_steps: int
    width: int
    layers: int

    @property
    def train_steps(self) -> int:
        """Optimiser steps each arm receives (Time2Track: delay + diffusion; baseline: all diffusion)."""
        return self.delay_steps + self.diffusion_steps


SCALES = {"tiny": Scale(40, 8, 24, 32, 1), "default": Scale(700, 300, 1500, 64, 2),
          "large": Scale(3000, 1000, 10_000, 128, 4)}


@dataclass
class Trained:
    """One seed's trained models, the held-out subjects' truth and each arm's prediction, and the delays."""

    scale: str
    seed: int
    cohort: data.Cohort
    train: np.ndarray
    test: np.ndarray
    delay: DelayModel
    models: dict[str, ConditionalMotionDiffusion]
    norm: dict[str, Any]
    predictions: dict[str, np.ndarray] = field(default_factory=dict)
    emd_read: np.ndarray | None = None  # EMD read from every subject's ECG (s)
    emd_recovered: np.ndarray | None = None  # EMD aligned with the motion, training subjects (s)
    losses: dict[str, list[float]] = field(default_factory=dict)


def _inputs(cohort: data.Cohort, ecg_scale: float, dev: torch.device) -> torch.Tensor:
    ecg = cohort.ecg - np.median(cohort.ecg, axis=1, keepdims=True)
    return torch.tensor(ecg / ecg_scale, dtype=torch.float32, device=dev)


def _features(delay: DelayModel, ecg: torch.Tensor) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """(activations, EMD read from the ECG, delay-aware token features) of every subject."""
    acts = delay.activations(ecg)
    with torch.no_grad():
        bands, emd = delay(ecg)
    emd = emd.cpu().numpy().astype(float)
    return acts, emd, delay_aware_features(acts, emd, bands.cpu().numpy())


def _sample(run: Trained, ecg: torch.Tensor, features: dict[str, np.ndarray], dev: torch.device) -> None:
    """Each arm's DDIM sample for the held-out subjects (same noise), back in mm."""
    frame_dim = run.norm["frame_dim"]
    shape = (len(run.test), *run.cohort.motion.shape[1:])
    for arm, model in run.models.items():
        tokens = torch.tensor(features[arm][run.test], device=dev)
        x = model.sample(tokens, ecg[run.test], frame_dim, seed=10_000 + run.seed).cpu().numpy()
        run.predictions[arm] = (x * run.norm["motion_scale"] + run.norm["motion_mean"]).reshape(shape)


def run(scale: str, seed: int = 0, *, ecg_dir: Path = ECG, device: str = "auto",
        progress: Callable[[int, int], None] | None = None) -> Trained:
    """Train both arms on one seed's subjects at ``scale`` and sample the held-out subjects."""
    if scale not in SCALES:
        raise GeometryError(f"--scale {scale!r}: use one of {', '.join(SCALES)}")
    if not Path(ecg_dir).is_dir():
        raise GeometryError(f"{ecg_dir}: not a folder (the real ECG records live in ../shared/data/ecg)")
    size, dev = SCALES[scale], pick_device(device)
    torch.manual_seed(seed)
    cohort = data.cohort(Path(ecg_dir), size.subjects, seed=seed)
    train_idx, test_idx = data.split(len(cohort.emd), 0.3, seed)
    centred = cohort.ecg - np.median(cohort.ecg, axis=1, keepdims=True)
    ecg_scale = float(centred[train_idx].std())
    ecg = _inputs(cohort, ecg_scale, dev)
    total, done = size.train_steps * 2, [0]

    def step_done() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    delay = DelayModel().to(dev)
    acts = delay.activations(ecg)
    recovered = np.array([recover_delay(acts[i], cohort.motion[i]) for i in train_idx])
    usable = np.isfinite(recovered)
    targets = torch.tensor(recovered[usable], dtype=torch.float32, device=dev)
    delay_losses = fit_delay(delay, ecg[train_idx[usable]], targets, size.delay_steps, seed=seed,
                             step_done=step_done)
    _, emd_read, t2t_features = _features(delay, ecg)
    flat = cohort.motion.reshape(len(cohort.emd), cohort.motion.shape[1], -1)
    mean, motion_scale = flat[train_idx].mean(axis=0), float((flat[train_idx] - flat[train_idx].mean(0)).std())
    x0 = torch.tensor((flat - mean) / motion_scale, dtype=torch.float32, device=dev)
    features = {"time2track": t2t_features, "generic_diffusion": GenericMotionDiffusion.features(len(flat))}
    models: dict[str, ConditionalMotionDiffusion] = {
        "time2track": ConditionalMotionDiffusion(flat.shape[-1], t2t_features.shape[-1], size.width, size.layers),
        "generic_diffusion": GenericMotionDiffusion(flat.shape[-1], size.width, size.layers)}
    steps = {"time2track": size.diffusion_steps, "generic_diffusion": size.train_steps}
    losses = {"delay": delay_losses}
    for arm, model in models.items():
        torch.manual_seed(seed)
        model.to(dev)
        tokens = torch.tensor(features[arm], device=dev)
        losses[arm] = fit(model, x0[train_idx], tokens[train_idx], ecg[train_idx], steps[arm], seed=seed,
                          step_done=step_done)
    norm = {"ecg_scale": ecg_scale, "motion_mean": mean, "motion_scale": motion_scale, "frame_dim": flat.shape[-1],
            "token_dim": t2t_features.shape[-1]}
    out = Trained(scale, seed, cohort, train_idx, test_idx, delay, models, norm, emd_read=emd_read,
                  emd_recovered=recovered, losses=losses)
    _sample(out, ecg, features, dev)
    return out


def correlation_ci(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Pearson r of ``x`` and ``y`` with its 95% interval (Fisher z), and n."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(x) < 4 or x.std() == 0 or y.std() == 0:
        return {"r": None, "ci95": None, "n": int(len(x))}
    r = float(np.corrcoef(x, y)[0, 1])
    z, half = np.arctanh(np.clip(r, -0.999999, 0.999999)), 1.96 / np.sqrt(len(x) - 3)
    return {"r": r, "ci95": [float(np.tanh(z - half)), float(np.tanh(z + half))], "n": int(len(x))}


def delay_report(trained: Trained) -> dict[str, Any]:
    """How well the delays match the planted ones: read from held-out ECGs, and aligned on training subjects."""
    planted = trained.cohort.emd
    read = trained.emd_read[trained.test]
    return {"read_vs_planted_test": correlation_ci(read, planted[trained.test]),
            "read_mae_ms_test": float(np.nanmean(np.abs(read - planted[trained.test])) * 1000),
            "aligned_vs_planted_train": correlation_ci(trained.emd_recovered, planted[trained.train]),
            "planted_sd_ms": float(planted.std() * 1000)}


def rows(trained: Trained) -> list[dict[str, Any]]:
    """One row per arm (and the population mean) with the motion metrics on the held-out subjects."""
    truth = trained.cohort.motion[trained.test]
    population = trained.cohort.motion[trained.train].mean(axis=0)
    preds = {**trained.predictions, "population_mean": np.broadcast_to(population, truth.shape)}
    return [{"arm": arm, **motion.scores(pred, truth, population)} for arm, pred in preds.items()]


def _metrics(trained: Trained, device: str) -> dict[str, Any]:
    size = SCALES[trained.scale]
    return {"method": "time2track", "scale": trained.scale, "seed": trained.seed, "device": device,
            "data": {**data.DATA, "subjects": len(trained.cohort.emd), "train": len(trained.train),
                     "test": len(trained.test), "records": list(data.RECORDS)},
            "rows": rows(trained), "delay": delay_report(trained),
            "train_steps": {"time2track": {"delay": size.delay_steps, "diffusion": size.diffusion_steps},
                            "generic_diffusion": {"diffusion": size.train_steps}}}


def evaluate(out: Path) -> dict[str, Any]:
    """Re-score a trained folder: rebuild its subjects (same seed and scale), sample both arms, score them."""
    meta = read_metrics(out)
    state = read_checkpoint(out, "time2track")
    size, dev = SCALES[state["scale"]], torch.device("cpu")
    cohort = data.cohort(Path(state["ecg_dir"]), size.subjects, seed=state["seed"])
    train_idx, test_idx = data.split(len(cohort.emd), 0.3, state["seed"])
    delay = DelayModel()
    delay.load_state_dict(state["delay"])
    norm = {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in state["norm"].items()}
    ecg = _inputs(cohort, norm["ecg_scale"], dev)
    _, emd_read, t2t_features = _features(delay, ecg)
    models = {"time2track": ConditionalMotionDiffusion(norm["frame_dim"], norm["token_dim"], size.width, size.layers),
              "generic_diffusion": GenericMotionDiffusion(norm["frame_dim"], size.width, size.layers)}
    for arm, model in models.items():
        model.load_state_dict(state[arm])
        model.eval()
    trained = Trained(state["scale"], state["seed"], cohort, train_idx, test_idx, delay, models, norm,
                      emd_read=emd_read, emd_recovered=state["emd_recovered"].numpy())
    _sample(trained, ecg, {"time2track": t2t_features,
                           "generic_diffusion": GenericMotionDiffusion.features(len(cohort.emd))}, dev)
    return {**_metrics(trained, "cpu"), "trained_on": meta.get("device")}


@GEOMETRY_METHODS.register("time2track", family="motion", evaluate=evaluate,
                           summary="Time2Track: wavelet EMD + delay-aware tokens + motion diffusion vs generic")
def train(scale: str, out: Path, *, seed: int = 0, device: str = "auto",
          progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Train Time2Track and the generic baseline at ``scale`` on the real-ECG subjects; write
    ``out/checkpoint.pt`` and ``out/metrics.json`` (both arms and the population mean on held-out subjects)."""
    trained = run(scale, seed, device=device, progress=progress)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    norm = {k: torch.as_tensor(v) if isinstance(v, np.ndarray) else v for k, v in trained.norm.items()}
    torch.save({"method": "time2track", "scale": scale, "seed": seed, "ecg_dir": str(ECG), "norm": norm,
                "delay": trained.delay.state_dict(), "emd_recovered": torch.as_tensor(trained.emd_recovered),
                **{arm: {k: v.cpu() for k, v in m.state_dict().items()} for arm, m in trained.models.items()}},
               out / "checkpoint.pt")
    metrics = _metrics(trained, str(pick_device(device)))
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1, default=jsonable) + "\n")
    return json.loads(json.dumps(metrics, default=jsonable))
