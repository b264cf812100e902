"""The Time2Track claim: Time2Track against the generic motion diffusion baseline at equal optimiser steps, on
real-ECG subjects with planted delays."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import claims.time2track  # noqa: E402, F401  (registers the claim)
from claims.core import run_claim  # noqa: E402
from neurips26.methods.geometry.time2track.train import SCALES  # noqa: E402


def test_tiny_run_compares_both_arms_at_equal_steps_with_collapse_and_delay(shared_data: Path, tmp_path: Path,
                                                                           one_torch_thread: None) -> None:
    run_claim("time2track", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "time2track.json").read_text())
    assert written["name"] == "time2track" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    t2t, base = written["arms"]["time2track"], written["arms"]["generic_diffusion"]
    assert t2t["compute"] == base["compute"] and t2t["compute"]["train_steps"] == SCALES["tiny"].train_steps
    n_test = round(SCALES["tiny"].subjects * 0.3)
    assert t2t["n_items"] == base["n_items"] == [n_test] * 3
    assert all(-1 <= v <= 1 for v in t2t["values"] + base["values"])
    assert written["verdict"] in ("reproduced", "not reproduced") and len(written["ci95"]) == 2
    collapse = written["conditions"]["collapse_ratio"]
    assert collapse["arms"]["time2track"]["compute"] == collapse["arms"]["generic_diffusion"]["compute"]
    assert all(v >= 0 for arm in collapse["arms"].values() for v in arm["values"])
    delay = written["delay_read_vs_planted"]
    assert delay["n"] == 3 * n_test and -1 <= delay["r"] <= 1 and delay["ci95"][0] <= delay["r"] <= delay["ci95"][1]
    for seed in written["per_seed"]:
        assert abs(seed["metrics"]["population_mean"]["skill"]) < 1e-9
        assert seed["delay"]["aligned_vs_planted_train"]["r"] > 0.5  # the alignment finds the planted delays
    assert {"real", "generated"} <= set(written["data"])


def test_the_committed_default_results_file_is_the_claims_own() -> None:
    res = json.loads((ROOT / "bench" / "results" / "time2track.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py time2track --scale default --seeds {len(res['seeds'])}"
    assert res["arms"]["time2track"]["compute"] == res["arms"]["generic_diffusion"]["compute"]
    assert res["arms"]["time2track"]["compute"]["train_steps"] == SCALES["default"].train_steps
    lo, hi = res["ci95"]
    assert res["verdict"] == ("reproduced" if lo > 0 else "not reproduced")
    assert set(res["conditions"]) == {"collapse_ratio"} and "delay_read_vs_planted" in res
