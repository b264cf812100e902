"""Gated Forensic Memory: the relay makes the frozen VLM tell tampered images from authentic ones, on held-out images.

The embedded VLM is the one ``neurips26 gfm train`` runs on CPU: the small random Idefics3 of
:func:`neurips26.methods.diagnostics.vlm.tiny_idefics3` (seed 0). Per seed, the 15 scikit-image photographs are
split into 10 training and 5 held-out ones (:func:`forgery.split_photos`), so no held-out image shares a
photograph with a training image; images are half authentic, half copy-move or splice forgeries.

Arms, trained for the same optimiser steps on the same batches of training images (authenticity labels only):

* ``gfm``: the relay (:class:`gfm.ForensicRelay`) reads the layer the vision probe peaks at before the write
  layers (the middle layer when the curve is flat), and writes into the outputs of the two blocks before the last.
* ``frozen``: the frozen VLM's own "yes"/"no" answer, with only its label prior (a bias on the two answer logits,
  :class:`gfm.AnswerPrior`) trained: the frozen baseline given the same budget.

Metric: held-out authenticity accuracy; items are the held-out images (paired: the same image in both arms).
``extra`` keeps the training accuracy of both arms, the relay's gate sizes and the vision probe's curve with its
reading (flat or peaked). Whether the forensic signal peaks mid-network needs a pretrained VLM: that is the
separate claim ``gfm_peak``.
"""

from __future__ import annotations

import numpy as np
import torch
from neurips26.methods.diagnostics import forgery, gfm, probing, vision
from neurips26.methods.diagnostics.vlm import tiny_idefics3

from claims.core import CLAIMS, Arm, Outcome

# scale -> (training images, held-out images, optimiser steps, images per step)
SCALES = {"tiny": (16, 16, 4, 4), "default": (512, 400, 600, 8), "large": (2048, 1600, 2400, 16)}
LR = 1e-2


def one_seed(seed: int, scale: str) -> dict:
    """Both arms on one seed's split: held-out correctness per image, training accuracy, the probe curve."""
    n_train, n_test, steps, batch = SCALES[scale]
    torch.manual_seed(seed)
    vlm = tiny_idefics3()
    train_photos, test_photos = forgery.split_photos(seed)
    train_set = forgery.generate(n_train, seed=seed, photos=train_photos)
    test_set = forgery.generate(n_test, seed=seed + 1, photos=test_photos)
    write = gfm.write_layers(len(vlm.text_layers))
    curve = probing.probe(probing.collect(vlm.model, vision.items(vlm, test_set)), folds=3, n_boot=100, seed=seed)
    read, why = gfm.read_layer_from(curve, min(write))
    relay = gfm.ForensicRelay(vlm.model.config.text_config.hidden_size, read, write)
    relayed = gfm.train(vlm, relay, train_set, test_set, steps=steps, lr=LR, seed=seed, batch=batch)
    relay_train = gfm.accuracy(vlm, relay, train_set)
    relay.detach()
    prior = gfm.AnswerPrior()
    frozen = gfm.train(vlm, prior, train_set, test_set, steps=steps, lr=LR, seed=seed, batch=batch)
    reading = probing.shape(curve)
    return {"gfm": relayed.correct_after, "frozen": frozen.correct_after, "steps": steps,
            "detail": {"seed": seed, "held_out_photos": list(test_photos), "read_layer": read, "read_because": why,
                       "write_layers": list(write), "train_accuracy": {"gfm": relay_train,
                                                                       "frozen": gfm.accuracy(vlm, prior, train_set)},
                       "gate_mean_abs": [float(g) for g in torch.tanh(relay.gate.detach()).abs().mean(1)],
                       "final_loss": {"gfm": float(np.mean(relayed.losses[-20:])),
                                      "frozen": float(np.mean(frozen.losses[-20:]))},
                       "probe": {"flat": reading.flat, "peak": reading.peak, "shape": reading.describe(),
                                 "auc": [round(s.auc, 4) for s in curve]}}}


@CLAIMS.register("gfm", method="Gated Forensic Memory",
                 claim="A zero-initialised gated relay from a VLM's most forensic layer into its late layers, trained "
                       "on authenticity labels alone with the VLM frozen, detects tampered images better than the "
                       "frozen VLM on held-out images",
                 metric="held-out authenticity accuracy", direction="higher",
                 baseline="the frozen VLM's own yes/no answer with its label prior trained (same steps and images)",
                 method_arm="gfm", baseline_arm="frozen")
def gfm_claim(scale: str, seeds: list[int]) -> Outcome:
    """Relay against the frozen baseline, per seed a photo-disjoint split of generated forgeries."""
    torch.set_num_threads(1)
    runs = [one_seed(seed, scale) for seed in seeds]
    compute = {"train_steps": runs[0]["steps"], "trained_on": "authenticity labels only, VLM frozen"}
    arms = {name: Arm([float(np.mean(r[name])) for r in runs], dict(compute), [list(map(float, r[name]))
                                                                                for r in runs])
            for name in ("gfm", "frozen")}
    return Outcome(arms=arms, extra={"model": "tiny random Idefics3 (seed 0), the model `neurips26 gfm train` runs",
                                     "chance": 0.5, "per_seed": [r["detail"] for r in runs]})
