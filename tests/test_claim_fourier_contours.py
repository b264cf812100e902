"""The Fourier Contour Learning claim: a tiny run's results file, and the committed default-scale one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch
from neurips26.methods.geometry.fourier_contours import experiment, losses
from neurips26.methods.geometry.fourier_contours.data import Stacks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.fourier_contours import DICE_MARGIN  # noqa: E402

torch.set_num_threads(1)


def test_tiny_run_writes_a_results_file_with_equal_compute_and_every_condition(tmp_path):
    res = run_claim("fourier_contours", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "fourier_contours.json").read_text())
    assert written["name"] == "fourier_contours" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    assert written["direction"] == "lower" and set(written["arms"]) == {"fcl", "unet"}
    steps = experiment.SETTINGS["tiny"].steps
    test_stacks = experiment.SETTINGS["tiny"].test_subjects * len(experiment.SETTINGS["tiny"].frames)
    for arm in written["arms"].values():
        assert arm["compute"] == {"train_steps": steps} and arm["n_items"] == [test_stacks] * 3
        assert all(v >= 0 for v in arm["values"])
    assert set(written["conditions"]) == {"baseline=unet+volumes", "ef_abs_error"}
    for cond in written["conditions"].values():
        assert cond["arms"]["fcl"]["compute"] == cond["arms"]["unet"]["compute"]
        assert cond["verdict"] in ("reproduced", "not reproduced")
    lo, hi = res["ci95"]
    assert lo <= res["effect"] <= hi and res["verdict"] == ("reproduced" if hi < 0 else "not reproduced")
    dice = written["dice"]
    assert set(dice["means"]) == {"fcl", "unet", "unet_volume"} and all(0 <= m <= 1 for m in dice["means"].values())
    assert dice["margin"] == DICE_MARGIN and dice["comparable"] == (dice["ci95"][0] > -DICE_MARGIN)
    sizes = written["outputs_per_slice"]
    assert sizes["fcl"] < sizes["unet"] == sizes["unet_volume"] == experiment.SETTINGS["tiny"].grid.size ** 2


def test_the_measurement_loss_reaches_every_slice_through_the_closed_form_area():
    setting = experiment.SETTINGS["tiny"]
    train = experiment.training_stacks(setting, 0)
    part = train.take(np.nonzero((train.has_volume & ~train.has_mask).numpy())[0][:2])
    assert isinstance(part, Stacks) and not part.has_mask.any()
    coefficients = torch.zeros(*part.valid.shape, setting.model.harmonics, 4)
    coefficients[..., 0, 0] = coefficients[..., 0, 3] = 0.3  # circles
    coefficients.requires_grad_()
    volumes = experiment.volume_ml(torch.pi * (coefficients[..., 0] * coefficients[..., 3]
                                               - coefficients[..., 1] * coefficients[..., 2]).sum(-1),
                                   part.valid, setting.grid)
    losses.measurement_loss(volumes, part).backward()
    grad = coefficients.grad[..., 0, 0]
    assert (grad[part.valid] != 0).all() and (grad[~part.valid] == 0).all()  # padded slices get nothing


def test_the_committed_default_results_file_is_the_claims_own():
    path = ROOT / "bench" / "results" / "fourier_contours.json"
    res = json.loads(path.read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py fourier_contours --scale default --seeds {len(res['seeds'])}"
    assert res["arms"]["fcl"]["compute"] == res["arms"]["unet"]["compute"] == {
        "train_steps": experiment.SETTINGS["default"].steps}
    lo, hi = res["ci95"]
    assert res["verdict"] == ("reproduced" if hi < 0 else "not reproduced")
