"""Scoring an arm on the held-out set at every test scale, and what it costs.

Each held-out image is segmented at each scale (the same shape rendered on a coarser or finer grid over the same
field of view) and scored with :func:`..segmentation.scores` (Dice, HD95, NSD at 1 mm, Boundary IoU, ...)
against its exact truth at that grid. The cost is the forward pass's wall time per image at the training grid
and its GFLOPs (convolutions and matrix products, as ``torch.utils.flop_counter`` counts them; the graph's
gathers and scatters are not counted).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from ..segdata import BASELINES
from ..segmentation import scores
from .data import Sample, SegmentationSet
from .fit import stack
from .model import Segmenter

CHUNK = 8  # images per forward pass when scoring
REPORTED = ("dice", "nsd", "hd95", "boundary_iou")


@torch.no_grad()
def predict(model: Segmenter, samples: Sequence[Sample], device: torch.device) -> tuple[list[np.ndarray], float]:
    """The boolean masks of ``samples`` (one grid) and the forward pass's wall time per image (seconds)."""
    images, _ = stack(samples)
    model.to(device).eval()
    masks, seconds = [], 0.0
    for i in range(0, images.shape[0], CHUNK):
        x = images[i:i + CHUNK].to(device)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        logits = model(x)[0]
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        seconds += time.perf_counter() - start
        masks.extend(m for m in (logits[:, 0] > 0).cpu().numpy())
    return masks, seconds / max(1, len(samples))


def gflops(model: Segmenter, size: tuple[int, int], device: torch.device) -> float:
    """GFLOPs of one forward pass on one ``size`` image (convolutions and matrix products)."""
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model.to(device).eval()(torch.zeros(1, 1, *size, device=device))
    return counter.get_total_flops() / 1e9


def score_masks(masks: Sequence[np.ndarray], samples: Sequence[Sample]) -> list[dict[str, float]]:
    """Every segmentation metric of each mask against its sample's truth."""
    return [scores(m, s.truth, s.spacing) for m, s in zip(masks, samples, strict=True)]


def score_arm(predictor: Callable[[Sequence[Sample]], tuple[list[np.ndarray], float]],
              data: SegmentationSet) -> dict[str, object]:
    """Per scale, each held-out sample's metrics, and the wall time per image at the training grid (scale 1)."""
    per_scale, seconds = {}, None
    for scale, samples in sorted(data.test.items()):
        masks, per_image = predictor(samples)
        per_scale[scale] = score_masks(masks, samples)
        if scale == 1.0:
            seconds = per_image
    return {"scores": per_scale, "seconds_per_image": seconds}


def score_model(model: Segmenter, data: SegmentationSet, device: torch.device) -> dict[str, object]:
    """:func:`score_arm` for a trained segmenter, with its GFLOPs and parameter count at the training grid."""
    out = score_arm(lambda samples: predict(model, samples, device), data)
    size = data.test[1.0][0].image.shape if 1.0 in data.test else data.train[0].image.shape
    out["gflops"] = gflops(model, size, device)
    out["parameters"] = sum(p.numel() for p in model.parameters())
    if model.plugin is not None:  # the routed graph's size on one held-out image at the training grid
        model(torch.from_numpy(data.test[1.0][0].image if 1.0 in data.test else data.train[0].image)
              [None, None].to(device))
        graph = model.plugin.last_graph
        out["nodes_per_image"] = graph.n_nodes
        out["pixels_per_image"] = int(graph.index[0].numel())
    return out


def score_classical(name: str, data: SegmentationSet) -> dict[str, object]:
    """:func:`score_arm` for one of :mod:`..segdata`'s classical baselines (``otsu``, ``active_contour``)."""
    method = BASELINES[name]

    def run(samples: Sequence[Sample]) -> tuple[list[np.ndarray], float]:
        start = time.perf_counter()
        masks = [method(s.image, (s.spacing, s.spacing)) for s in samples]
        return masks, (time.perf_counter() - start) / max(1, len(samples))

    return score_arm(run, data)


def row(arm: str, scored: dict[str, object]) -> dict[str, object]:
    """One metrics.json row: the mean of each reported metric at each scale (``nsd`` at 1x, ``nsd@2x``, ...),
    the cost, and for Fractal-G the routed graph's size."""
    out: dict[str, object] = {"arm": arm}
    for scale, items in scored["scores"].items():
        suffix = "" if scale == 1.0 else f"@{scale:g}x"
        for key in REPORTED:
            out[key + suffix] = float(np.mean([s[key] for s in items]))
    if scored.get("seconds_per_image") is not None:
        out["ms_per_image"] = 1000 * scored["seconds_per_image"]
    for key in ("gflops", "parameters", "nodes_per_image", "pixels_per_image"):
        if key in scored:
            out[key] = scored[key]
    return out
