"""The unposed surface reconstruction claim: the full method against its ray regressor alone at equal steps, on
held-out real meshes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.surface_recon import CONDITIONS, HIGHER  # noqa: E402
from neurips26.methods.geometry.surface_recon.experiment import ARMS, MESHES  # noqa: E402
from neurips26.methods.geometry.surface_recon.pipeline import BASELINE, METHOD, POINTMAP  # noqa: E402

torch.set_num_threads(1)
needs_meshes = pytest.mark.skipif(not MESHES.is_dir(), reason="needs the real meshes in ../shared/data/meshes")


@needs_meshes
def test_tiny_run_writes_a_results_file_with_equal_compute_and_held_out_meshes(tmp_path):
    res = run_claim("surface_recon", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "surface_recon.json").read_text())
    assert written["name"] == "surface_recon" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    assert set(written["arms"]) == {METHOD, BASELINE} and written["direction"] == "lower"
    method, baseline = written["arms"][METHOD], written["arms"][BASELINE]
    assert method["compute"] == baseline["compute"] and method["compute"]["train_steps"] > 0
    assert method["n_items"] == baseline["n_items"] == [1, 1, 1]
    assert set(written["conditions"]) == set(CONDITIONS)
    for cond in written["conditions"].values():
        assert cond["arms"][METHOD]["compute"] == cond["arms"][BASELINE]["compute"]
        assert cond["verdict"] in ("reproduced", "not reproduced")
    assert set(written["higher_is_better"]) == set(HIGHER)
    assert written["vs_pointmap_only"]["note"].startswith("the pointmaps alone take 0 optimiser steps")
    assert set(written["means"]) == set(ARMS) and written["means"][POINTMAP]["chamfer_l1"] > 0
    for split in written["splits"]:
        assert split["test"] and not set(split["train"]) & set(split["test"])
    lo, hi = res["ci95"]
    assert res["verdict"] == ("reproduced" if hi < 0 else "not reproduced")


def test_the_committed_default_results_file_is_the_claims_own():
    res = json.loads((ROOT / "bench" / "results" / "surface_recon.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py surface_recon --scale default --seeds {len(res['seeds'])}"
    assert res["arms"][METHOD]["compute"] == res["arms"][BASELINE]["compute"]
    assert set(res["conditions"]) == set(CONDITIONS) and set(res["means"]) == set(ARMS)
    lo, hi = res["ci95"]
    assert res["verdict"] == ("reproduced" if hi < 0 else "not reproduced")
    for key in HIGHER:
        low, high = res["higher_is_better"][key]["ci95"]
        assert res["higher_is_better"][key]["verdict"] == ("reproduced" if low > 0 else "not reproduced")
