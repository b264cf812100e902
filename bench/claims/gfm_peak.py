"""Gated Forensic Memory's premise: a VLM's image tokens carry the tampered region best at a middle layer.

The vision probe (:mod:`neurips26.methods.diagnostics.probing`) separates a forgery's tampered-region image tokens
from its authentic ones, layer by layer. The premise of the relay is that this separability peaks inside the
network and fades by the last layer. Per seed, the peak layer is picked among the middle layers on one set of
generated forgeries (the *selection* set) and both that layer and the last one are then probed on another set
(the *measurement* set, other photographs' crops, another generator seed), so the peak's AUC is not inflated by
having been chosen as the maximum.

Arms: ``peak`` (the chosen middle layer's AUC) and ``last`` (the last layer's AUC), on the measurement set; no arm
trains anything (``train_steps`` 0). A randomly initialised VLM cannot have learned such a peak, so on the embedded
VLM (the small random Idefics3 ``neurips26 gfm train`` runs) the verdict is ``untestable here``, with the measured
curves kept in ``extra`` (they are flat: :func:`probing.shape`). With a pretrained Idefics3-style folder (e.g.
SmolVLM-256M-Instruct) at ``<cache>/models/SmolVLM-256M-Instruct`` the same code measures it and gives a verdict.
"""

from __future__ import annotations

import numpy as np
import torch
from neurips26.methods.diagnostics import forgery, probing, vision
from neurips26.methods.diagnostics.vlm import VLM, load_idefics3, tiny_idefics3

from claims.core import CLAIMS, Arm, Outcome
from neurips26 import models, settings

# scale -> images per set (selection and measurement), each half authentic
SCALES = {"tiny": 16, "default": 96, "large": 400}
PRETRAINED = "SmolVLM-256M-Instruct"


def pretrained_folder():
    """The local pretrained VLM folder the claim measures when it exists (None: only the random VLM is here)."""
    folder = settings.cache_dir() / "models" / PRETRAINED
    return folder if (folder / "config.json").is_file() else None


def one_seed(vlm: VLM, seed: int, images: int, device: str) -> dict:
    """Pick the peak middle layer on the selection set, then probe it and the last layer on the measurement set."""
    select = forgery.generate(images, seed=seed, size=vlm.image_size)
    measure = forgery.generate(images, seed=seed + 10_000, size=vlm.image_size)
    curve = probing.probe(probing.collect(vlm.model, vision.items(vlm, select), device), folds=3, n_boot=100,
                          seed=seed)
    last = max(s.layer for s in curve)
    peak = probing.peak([s for s in curve if 0 < s.layer < last]).layer
    measured = probing.probe(probing.collect(vlm.model, vision.items(vlm, measure), device), folds=3, n_boot=100,
                             seed=seed, layers=[peak, last])
    reading = probing.shape(curve)
    return {"peak": measured[0].auc, "last": measured[1].auc,
            "detail": {"seed": seed, "peak_layer": peak, "last_layer": last, "selection_flat": reading.flat,
                       "selection_shape": reading.describe(), "selection_auc": [round(s.auc, 4) for s in curve]}}


@CLAIMS.register("gfm_peak", method="Gated Forensic Memory (premise)",
                 claim="The tampered-region image tokens of a VLM are most linearly separable at a middle layer and "
                       "less so at the last layer",
                 metric="probe ROC AUC (tampered vs authentic image tokens)", direction="higher",
                 baseline="the same probe at the last layer", method_arm="peak", baseline_arm="last")
def gfm_peak(scale: str, seeds: list[int]) -> Outcome:
    """Peak middle layer against the last layer, chosen and measured on separate forgeries."""
    torch.set_num_threads(1)
    folder = pretrained_folder()
    device = models.device()
    vlm = load_idefics3(folder, device) if folder is not None else tiny_idefics3()
    runs = [one_seed(vlm, seed, SCALES[scale], device) for seed in seeds]
    arms = {name: Arm([float(r[name]) for r in runs], {"train_steps": 0}) for name in ("peak", "last")}
    flat = sum(r["detail"]["selection_flat"] for r in runs)
    untestable = None if folder is not None else (
        f"needs a pretrained VLM (an Idefics3-style folder such as {PRETRAINED} at <cache>/models/{PRETRAINED}); "
        f"the embedded VLM is randomly initialised and its probe curve is flat in {flat} of {len(runs)} seeds")
    return Outcome(arms=arms, untestable=untestable,
                   extra={"model": str(folder) if folder else "tiny random Idefics3 (seed 0)",
                          "mean_auc_difference": float(np.mean([r["peak"] - r["last"] for r in runs])),
                          "per_seed": [r["detail"] for r in runs]})
