"""Fourier Contour Learning against a dense U-Net when only some images have masks, at equal optimiser steps.

Data: cine stacks rendered from the cardiac phantom (:mod:`neurips26.methods.geometry.fourier_contours.data`;
generated, exact truth). Per seed, fresh subjects: masks on the ED/ES stacks of a few training subjects, measured
EDV/ESV for every training subject, the other cine frames unlabeled; held-out test subjects at every frame.
Arms (:mod:`neurips26.methods.geometry.fourier_contours.experiment`), each trained for the same number of Adam
steps:

* ``fcl`` -- CNN encoder, anatomy-query decoder, cross-slice attention, per-slice elliptic Fourier coefficients;
  trained on the masks (traced contours), the measured volumes (closed-form areas, disc summation) and an
  unlabeled consistency term;
* ``unet`` -- a dense 2D U-Net on the masks (what the paper compares with);
* ``unet_volume`` -- the same U-Net also given the volumes through its soft area (a stronger baseline: the
  condition ``baseline=unet+volumes``).

Headline: absolute volume error (ml) of every held-out stack (items paired across arms) against the disc
summation of the exact slice areas. Condition ``ef_abs_error``: EF error (percentage points) per test subject.
``extra.dice``: each arm's mean slice Dice and the fcl - unet difference with its 95% interval (the claim is
*comparable* segmentation; we call it comparable when the interval's lower end is above -0.05, fixed before
running); ``extra.outputs_per_slice``: numbers each network outputs per slice (the paper's "far fewer output
parameters").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from neurips26.methods.geometry.fourier_contours import experiment

from claims.core import CLAIMS, Arm, Outcome, interval

DICE_MARGIN = 0.05  # "comparable": the Dice difference's 95% interval lies above -DICE_MARGIN


def _arm(runs: list[dict[str, Any]], arm: str, key: str, steps: int) -> Arm:
    items = [list(map(float, run[arm][key])) for run in runs]
    return Arm(values=[float(np.mean(x)) for x in items], items=items, compute={"train_steps": steps})


@CLAIMS.register("fourier_contours", method="Fourier Contour Learning",
                 claim="per-slice Fourier contours from anatomy queries with cross-slice attention, supervised by "
                       "masks, volumes (closed-form areas) and unlabeled consistency, segment comparably to a dense "
                       "U-Net with far fewer output numbers and measure volumes more accurately when only some "
                       "images have masks",
                 metric="absolute LV volume error (ml) per held-out stack", direction="lower",
                 baseline="dense 2D U-Net trained on the same masks, same optimiser steps",
                 method_arm="fcl", baseline_arm="unet")
def fourier_contours(scale: str, seeds: list[int]) -> Outcome:
    """Train the three arms per seed on fresh phantom subjects; volume error headline, Dice and sizes extra."""
    torch.set_num_threads(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    runs = [experiment.run_seed(scale, seed, device) for seed in seeds]
    steps = experiment.SETTINGS[scale].steps
    arms = {a: _arm(runs, a, "volume_abs_error", steps) for a in ("fcl", "unet")}
    conditions = {
        "baseline=unet+volumes": {"fcl": arms["fcl"], "unet": _arm(runs, "unet_volume", "volume_abs_error", steps)},
        "ef_abs_error": {a: _arm(runs, a, "ef_abs_error", steps) for a in ("fcl", "unet")},
    }
    dice = {a: _arm(runs, a, "dice", steps) for a in experiment.ARMS}
    effect, ci = interval(dice["fcl"], dice["unet"])
    extra = {
        "dice": {"means": {a: float(np.mean(arm.values)) for a, arm in dice.items()},
                 "values": {a: arm.values for a, arm in dice.items()},
                 "fcl_minus_unet": effect, "ci95": list(ci), "margin": DICE_MARGIN,
                 "comparable": bool(ci[0] > -DICE_MARGIN)},
        "volume_rel_error": {a: float(np.mean([np.mean(r[a]["volume_rel_error"]) for r in runs]))
                             for a in experiment.ARMS},
        "outputs_per_slice": {a: runs[0][a]["outputs_per_slice"] for a in experiment.ARMS},
        "parameters": {a: runs[0][a]["parameters"] for a in experiment.ARMS},
        "labels": runs[0]["labels"], "setting": runs[0]["setting"], "device": str(device),
        "arm_seconds": {a: [r[a]["seconds"] for r in runs] for a in experiment.ARMS},
        "final_losses": {a: [r[a]["final_loss"] for r in runs] for a in experiment.ARMS},
        "data": "generated: cardiac phantom cine stacks rendered as images, exact masks, areas and volumes",
    }
    return Outcome(arms=arms, conditions=conditions, extra=extra)
