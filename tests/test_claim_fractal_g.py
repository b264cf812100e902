"""The Fractal-G claim: U-Net with the plug-in against the plain U-Net at equal steps, across test resolutions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import claims.fractal_g  # noqa: E402,F401  (registers the claim)
from claims.core import run_claim  # noqa: E402
from neurips26.methods.geometry.fractal_g.model import ModelConfig, Segmenter  # noqa: E402

torch.set_num_threads(1)


def test_tiny_run_writes_a_results_file_with_equal_compute_and_every_condition(tmp_path):
    res = run_claim("fractal_g", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "fractal_g.json").read_text())
    assert written["name"] == "fractal_g" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    assert set(written["arms"]) == {"fractal-g", "unet"} and written["direction"] == "higher"
    method, base = written["arms"]["fractal-g"], written["arms"]["unet"]
    assert method["compute"] == base["compute"] and method["compute"]["train_steps"] > 0
    assert len(method["values"]) == 3 and method["n_items"] == base["n_items"] == [4, 4, 4]
    assert all(0 <= v <= 1 for v in method["values"] + base["values"])
    assert set(written["conditions"]) == {"nsd@1x", "nsd@0.5x", "nsd@2x", "boundary_iou@0.5x",
                                          "boundary_iou@2x"}
    for cond in written["conditions"].values():
        assert cond["arms"]["fractal-g"]["compute"] == cond["arms"]["unet"]["compute"]
        assert cond["verdict"] in ("reproduced", "not reproduced")
    assert set(written["hd95_mm"]) == {"hd95@0.5x", "hd95@1x", "hd95@2x"}
    for comparison in [*written["hd95_mm"].values(), *written["nsd_lost_off_grid"].values()]:
        lo, hi = comparison["ci95"]
        assert comparison["verdict"] == ("reproduced" if hi < 0 else "not reproduced")
    overhead = written["overhead"]
    assert overhead["fractal-g"]["gflops"] > overhead["unet"]["gflops"] > 0  # the plug-in adds work
    assert overhead["fractal-g"]["nodes_per_image"] < overhead["fractal-g"]["pixels_per_image"]
    assert res["effect"] == pytest.approx(method["mean"] - base["mean"])


def test_both_arms_share_the_backbone_and_only_the_method_carries_the_plug_in():
    config = ModelConfig(base=8, dim=16)
    torch.manual_seed(0)
    method = Segmenter(config, fractal_g=True)
    torch.manual_seed(0)
    base = Segmenter(config, fractal_g=False)
    for (name, a), (_, b) in zip(method.backbone.state_dict().items(), base.backbone.state_dict().items(),
                                 strict=True):
        assert torch.equal(a, b), name
    assert base.plugin is None and method.plugin is not None
    x = torch.randn(2, 1, 40, 36)  # not a multiple of the root cell: padded, then cropped back
    out, backbone = method(x)
    assert out.shape == backbone.shape == (2, 1, 40, 36)
    assert torch.allclose(out, backbone)  # the plug-in's residual head starts at zero: it starts as the U-Net
    assert torch.allclose(base(x)[0], backbone)


def test_the_committed_default_results_file_is_the_claims_own():
    path = ROOT / "bench" / "results" / "fractal_g.json"
    if not path.is_file():
        pytest.skip("bench/results/fractal_g.json is written by the default-scale run")
    res = json.loads(path.read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py fractal_g --scale default --seeds {len(res['seeds'])}"
    assert res["arms"]["fractal-g"]["compute"] == res["arms"]["unet"]["compute"]
    lo, hi = res["ci95"]
    assert res["verdict"] == ("reproduced" if lo > 0 else "not reproduced")
