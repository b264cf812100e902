"""Fractal-G: a U-Net with the plug-in against the same U-Net without it, at equal optimiser steps.

For each seed both arms start from the same backbone weights and see the same batches (the project's generated
lesion-like shapes with fractal boundaries and exact truth, :mod:`neurips26.methods.geometry.segdata`), then are
scored on the same held-out shapes at the training grid (the headline: Boundary IoU; NSD at 1 mm is near 1 for
every arm there, the grid's voxels being 1 mm) and rendered at 0.5x and 2x (the cross-resolution conditions, NSD
and Boundary IoU). HD95 (lower is better) and the NSD lost when the test grid differs are
compared with the harness's own interval and verdict in ``extra``, beside the compute overhead (wall time and
GFLOPs per image, parameters, routed nodes).
"""

from __future__ import annotations

import numpy as np
from neurips26.methods.geometry.fractal_g.scoring import score_model
from neurips26.methods.geometry.fractal_g.train import BASELINE, METHOD, TEST_SCALES, dataset, scale_config, train_arms
from neurips26.methods.geometry.training import device

from claims.core import CLAIMS, Arm, Outcome, interval, verdict

HEADLINE = "boundary_iou@1x"
CONDITIONS = (("nsd", 1.0), ("nsd", 0.5), ("nsd", 2.0), ("boundary_iou", 0.5), ("boundary_iou", 2.0))
COST = ("seconds_per_image", "gflops", "parameters", "nodes_per_image", "pixels_per_image")


def _key(metric: str, scale: float) -> str:
    return f"{metric}@{scale:g}x"


def _arms(items: dict[str, dict[str, list[list[float]]]], key: str, compute: dict[str, int]) -> dict[str, Arm]:
    return {arm: Arm(values=[float(np.mean(x)) for x in per_arm[key]], items=per_arm[key], compute=dict(compute))
            for arm, per_arm in items.items()}


def _lower_is_better(arms: dict[str, Arm]) -> dict[str, object]:
    effect, ci = interval(arms[METHOD], arms[BASELINE])
    return {"means": {a: float(np.mean(arm.values)) for a, arm in arms.items()}, "effect": effect, "ci95": list(ci),
            "verdict": verdict(ci, "lower")}


@CLAIMS.register("fractal_g", method="Fractal-G",
                 claim="Routing a segmenter's features through a non-uniform graph, dense where it is uncertain "
                       "(Uncertainty-Aware Fission Router, Area-Aware Continuous Neighborhood Graph, Topology-Aware "
                       "Implicit Renderer), sharpens thin irregular boundaries (NSD, HD95, Boundary IoU) and holds "
                       "up when the test resolution differs from training",
                 metric="Boundary IoU at the training grid", direction="higher",
                 baseline="the same U-Net without the plug-in, equal optimiser steps",
                 method_arm=METHOD, baseline_arm=BASELINE)
def fractal_g(scale: str, seeds: list[int]) -> Outcome:
    """Train both arms per seed on generated shapes, score them at 0.5x, 1x and 2x the training grid."""
    config = scale_config(scale)
    dev = device("auto")
    metrics = ("nsd", "boundary_iou", "hd95", "dice")
    items = {arm: {_key(m, s): [] for m in metrics for s in TEST_SCALES} for arm in (METHOD, BASELINE)}
    cost: dict[str, dict[str, list[float]]] = {arm: {k: [] for k in (*COST, "train_seconds")} for arm in items}
    for seed in seeds:
        data = dataset(config)
        for arm, (model, report) in train_arms(config, data, seed, dev).items():
            scored = score_model(model, data, dev)
            for s, per_item in scored["scores"].items():
                for m in metrics:
                    items[arm][_key(m, s)].append([float(x[m]) for x in per_item])
            for k in COST:
                if k in scored:
                    cost[arm][k].append(float(scored[k]))
            cost[arm]["train_seconds"].append(report["train_seconds"])
    compute = {"train_steps": config.steps, "batch": config.batch}
    drops = {arm: {_key("nsd", s): [list(np.subtract(a, b)) for a, b in zip(per["nsd@1x"], per[_key("nsd", s)],
                                                                               strict=True)]
                   for s in TEST_SCALES if s != 1.0} for arm, per in items.items()}
    overhead = {arm: {k: float(np.mean(v)) for k, v in c.items() if v} for arm, c in cost.items()}
    return Outcome(
        arms=_arms(items, HEADLINE, compute),
        conditions={_key(m, s): _arms(items, _key(m, s), compute) for m, s in CONDITIONS},
        extra={
            "hd95_mm": {_key("hd95", s): _lower_is_better(_arms(items, _key("hd95", s), compute))
                        for s in TEST_SCALES},
            "nsd_lost_off_grid": {k: _lower_is_better(_arms(drops, k, compute)) for k in drops[METHOD]},
            "dice": {_key("dice", s): {a: float(np.mean(items[a][_key("dice", s)])) for a in items}
                     for s in TEST_SCALES},
            "overhead": {**overhead, "time_ratio": overhead[METHOD]["seconds_per_image"]
                         / overhead[BASELINE]["seconds_per_image"],
                         "gflops_ratio": overhead[METHOD]["gflops"] / overhead[BASELINE]["gflops"]},
            "settings": {"device": str(dev), "data": "generated lesion-like shapes (segdata), exact truth",
                         "train_grid": config.size, "test_scales": list(TEST_SCALES), "n_train": config.n_train,
                         "n_test": config.n_test, "model": config.model.dict(), "nsd_tau_mm": 1.0},
        })
