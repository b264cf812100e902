"""The label-shift claim: LP region against interval Gaussian elimination on scikit-learn's bundled data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.labelshift import CONFIG, repetition  # noqa: E402
from neurips26.methods.labelshift.experiment import population  # noqa: E402


def test_tiny_run_writes_a_results_file_with_equal_compute_and_every_condition(tmp_path):
    res = run_claim("labelshift", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "labelshift.json").read_text())
    assert written["name"] == "labelshift" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    assert set(written["arms"]) == {"lp", "ge"} and written["direction"] == "lower"
    lp, ge = written["arms"]["lp"], written["arms"]["ge"]
    assert lp["compute"] == ge["compute"] == {"train_steps": 0}
    assert len(lp["values"]) == len(ge["values"]) == 3 and lp["n_items"] == ge["n_items"] == [6, 6, 6]
    assert set(written["conditions"]) == {"wine/dirichlet", "wine/tweak_one"}
    for cond in written["conditions"].values():
        assert cond["arms"]["lp"]["compute"] == cond["arms"]["ge"]["compute"]
        assert cond["verdict"] in ("reproduced", "not reproduced")
    assert res["effect"] <= 0  # the LP intervals lie inside the GE ones, so never wider on average
    assert 0 <= written["coverage"]["lp"] <= written["coverage"]["ge"] <= 1  # LP inside GE: covered there too
    assert 0 < written["width_ratio"] <= 1 and written["coverage_guarantee"] == 1 - CONFIG.delta


def test_each_repetition_gives_lp_intervals_no_wider_than_ge_on_the_same_boxes():
    pop = population("wine", seed=0)
    rng = np.random.default_rng(7)
    for shift in ("dirichlet", "tweak_one"):
        for _ in range(3):
            rec = repetition(pop, shift, CONFIG, rng)
            (lp_width, lp_covers), (ge_width, ge_covers) = rec["lp"], rec["ge"]
            assert 0 < lp_width <= ge_width + 1e-9
            assert ge_covers or not lp_covers  # the LP region lies inside GE's: covering w there covers it here


def test_the_committed_default_results_file_is_the_claims_own():
    res = json.loads((ROOT / "bench" / "results" / "labelshift.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py labelshift --scale default --seeds {len(res['seeds'])}"
    assert res["arms"]["lp"]["compute"] == res["arms"]["ge"]["compute"]
    assert set(res["conditions"]) == {f"{d}/{s}" for d in ("digits", "wine", "breast_cancer")
                                      for s in ("dirichlet", "tweak_one")}
    lo, hi = res["ci95"]
    assert res["verdict"] == ("reproduced" if hi < 0 else "not reproduced")
