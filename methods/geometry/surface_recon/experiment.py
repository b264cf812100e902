"""Train on some real meshes, test on the others: the method, its ablation at equal steps, and the baselines.

Per seed the meshes are split at random (``n_test`` held out, ``n_train`` of the rest for training). Training
scenes (random cameras, the stand-in prior's noise) give rays with their true depth; both trained arms start from
the same weights and see the same rays in the same batches for the same steps (Adam, cosine decay, Huber loss
on the depth in units of the query's median depth). Held-out scenes are then reconstructed by every arm and
scored after Sim(3) alignment and ICP (:func:`..surfaces.scores`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import trimesh
from torch import nn

from neurips26.settings import REPO_ROOT

from ..bench import meshes as mesh_files
from ..core import GeometryError
from ..surfaces import scores
from .pipeline import (
    BASELINE,
    CLASSICAL,
    METHOD,
    POINTMAP,
    TRAINED,
    Scene,
    arrays,
    classical,
    contexts,
    make_scene,
    pointmap_only,
    reconstruct,
    targets,
)
from .prior import PriorNoise, RenderedDepthPrior
from .ray_regressor import RayRegressor, RegressorConfig

MESHES = REPO_ROOT.parent / "shared" / "data" / "meshes"
ARMS = (METHOD, BASELINE, POINTMAP, *CLASSICAL)
HUBER = 0.01
Progress = Callable[[int, int], None] | None


@dataclass(frozen=True)
class ScaleConfig:
    """One scale's views, meshes, scenes, rays and steps."""

    views: int
    size: int  # pixels a side
    n_test: int  # held-out meshes
    n_train: int  # training meshes
    train_scenes: int  # per training mesh
    test_scenes: int  # per held-out mesh
    rays_per_view: int  # training rays drawn per view of a training scene
    steps: int
    batch: int
    samples: int  # truth points per held-out scene
    lr: float = 3e-3
    model: RegressorConfig = field(default_factory=RegressorConfig)
    noise: PriorNoise = field(default_factory=PriorNoise)

    def dict(self) -> dict[str, Any]:
        """As a plain dict (for checkpoints and metrics)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ScaleConfig:
        """The inverse of :meth:`dict`."""
        return cls(**{**raw, "model": RegressorConfig(**raw["model"]), "noise": PriorNoise(**raw["noise"])})


SCALE_CONFIGS = {
    "tiny": ScaleConfig(views=3, size=20, n_test=1, n_train=2, train_scenes=1, test_scenes=1, rays_per_view=100,
                        steps=20, batch=64, samples=1000),
    "default": ScaleConfig(views=6, size=40, n_test=3, n_train=5, train_scenes=3, test_scenes=2,
                           rays_per_view=300, steps=400, batch=256, samples=5000),
    "large": ScaleConfig(views=8, size=96, n_test=3, n_train=5, train_scenes=12, test_scenes=4, rays_per_view=1000,
                         steps=6000, batch=1024, samples=20_000, model=RegressorConfig(dim=64, heads=4)),
}


def scale_config(scale: str) -> ScaleConfig:
    """The configuration of ``scale``; GeometryError for an unknown one."""
    if scale not in SCALE_CONFIGS:
        raise GeometryError(f"--scale {scale!r}: use one of {', '.join(SCALE_CONFIGS)}")
    return SCALE_CONFIGS[scale]


def load_meshes(folder: Path = MESHES) -> dict[str, trimesh.Trimesh]:
    """The real meshes of ``folder`` by file name; GeometryError when it is missing or holds none."""
    if not Path(folder).is_dir():
        raise GeometryError(f"{folder}: no mesh folder (the real meshes live in ../shared/data/meshes)")
    return {p.name: trimesh.load(p, force="mesh") for p in mesh_files(Path(folder))}


def split(names: list[str], config: ScaleConfig, seed: int) -> tuple[list[str], list[str]]:
    """(training, held-out) mesh names for ``seed``: disjoint, drawn at random."""
    if len(names) < 2:
        raise GeometryError(f"need 2 meshes at least (one to train on, one to test), found {len(names)}")
    order = [sorted(names)[i] for i in np.random.default_rng([seed, 7]).permutation(len(names))]
    n_test = min(config.n_test, len(names) - 1)
    return sorted(order[n_test:n_test + config.n_train]), sorted(order[:n_test])


def scenes(meshes: dict[str, trimesh.Trimesh], names: list[str], config: ScaleConfig, seed: int, count: int,
           stream: int) -> list[Scene]:
    """``count`` scenes of each named mesh, seeded by (``seed``, ``stream``, mesh, scene)."""
    out = []
    for name in names:
        index = sorted(meshes).index(name)
        for s in range(count):
            key = [seed, stream, index, s]
            prior = RenderedDepthPrior(config.noise, seed=int(np.random.SeedSequence(key).generate_state(1)[0]))
            out.append(make_scene(meshes[name], name, prior, config.views, config.size,
                                  int(np.random.SeedSequence(key + [1]).generate_state(1)[0]), config.samples))
    return out


def training_rays(train: list[Scene], config: ScaleConfig, seed: int) -> dict[str, dict[str, np.ndarray]]:
    """Each trained arm's input arrays and targets over the same rays of the training scenes."""
    rng = np.random.default_rng([seed, 11])
    parts: dict[str, list] = {arm: [] for arm in TRAINED}
    truth = []
    for scene in train:
        pixels = []
        for q in range(config.views):
            ok = np.flatnonzero(scene.surfels.valid[q].ravel() & (scene.views.depth[q].ravel() > 0))
            pixels.append(np.sort(rng.choice(ok, min(config.rays_per_view, len(ok)), replace=False)))
        for arm in TRAINED:
            parts[arm].extend(contexts(scene, arm, pixels))
        truth.extend(targets(scene, c) for c in parts[METHOD][-config.views:])
    target = np.concatenate(truth).astype(np.float32)
    return {arm: {**arrays(parts[arm]), "target": target} for arm in TRAINED}


def build(config: ScaleConfig, seed: int) -> RayRegressor:
    """A fresh ray regressor; every arm built with one seed starts from the same weights."""
    torch.manual_seed(seed)
    return RayRegressor(config.model)


def fit(model: RayRegressor, data: dict[str, np.ndarray], config: ScaleConfig, seed: int, device: torch.device,
        progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Train ``model`` for ``config.steps`` Adam steps on rays drawn by ``seed``; the fit's report."""
    keep = np.isfinite(data["target"])
    tensors = {k: torch.as_tensor(v[keep], device=device) for k, v in data.items()}
    model.to(device).train()
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, max(config.steps, 1))
    generator = torch.Generator().manual_seed(seed)
    loss_fn = nn.HuberLoss(delta=HUBER)
    curve, start = [], time.perf_counter()
    for step in range(config.steps):
        index = torch.randint(0, int(keep.sum()), (config.batch,), generator=generator).to(device)
        pred = model(tensors["features"][index], tensors["ray_features"][index], tensors["depths"][index],
                     tensors["mask"][index])
        loss = loss_fn(pred, tensors["target"][index]) / HUBER
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        curve.append(float(loss.detach()))
        if progress is not None:
            progress(step + 1)
    model.eval()
    every = max(1, config.steps // 20)
    return {"train_steps": config.steps, "train_seconds": round(time.perf_counter() - start, 2),
            "train_rays": int(keep.sum()), "loss_curve": [round(float(np.mean(curve[i:i + every])), 5)
                                                          for i in range(0, len(curve), every)]}


def score_scenes(models: dict[str, RayRegressor], test: list[Scene], device: torch.device,
                 progress: Callable[[], None] | None = None) -> dict[str, list[dict[str, float]]]:
    """Every arm's scores on each held-out scene (same order for all arms)."""
    out: dict[str, list[dict[str, float]]] = {arm: [] for arm in ARMS}
    for scene in test:
        points = {arm: reconstruct(scene, models[arm], arm, device) for arm in TRAINED}
        points[POINTMAP] = pointmap_only(scene)
        for name in CLASSICAL:
            points[name] = classical(scene, name, len(points[POINTMAP].xyz))
        for arm, pred in points.items():
            out[arm].append({**scores(pred, scene.truth), "points": len(pred.xyz)})
        if progress is not None:
            progress()
    return out


def run(config: ScaleConfig, seed: int, device: torch.device, meshes: dict[str, trimesh.Trimesh],
        progress: Progress = None) -> dict[str, Any]:
    """Split, train both arms at equal steps, score every arm on the held-out scenes: models, scores, reports."""
    train_names, test_names = split(list(meshes), config, seed)
    train = scenes(meshes, train_names, config, seed, config.train_scenes, stream=0)
    data = training_rays(train, config, seed)
    test = scenes(meshes, test_names, config, seed, config.test_scenes, stream=1)
    total = 2 * config.steps + len(test)
    models, reports = {}, {}
    for k, arm in enumerate(TRAINED):
        models[arm] = build(config, seed)
        reports[arm] = fit(models[arm], data[arm], config, seed, device,
                           None if progress is None else (lambda d, k=k: progress(k * config.steps + d, total)))
    done = iter(range(2 * config.steps + 1, total + 1))
    scored = score_scenes(models, test, device, None if progress is None else (lambda: progress(next(done), total)))
    return {"models": models, "reports": reports, "scores": scored, "train": train_names, "test": test_names,
            "scenes": [s.name for s in test], "references": [[list(v.references) for v in s.votes] for s in test]}
