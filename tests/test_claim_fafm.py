"""The FAFM claim: the tiny run end to end (arms at equal steps, episodes paired, the learning curve, smoothness,
the untestable verdict when nothing succeeds) and the learning curve's step estimate."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.fafm import ARMS, SCALES, steps_to_reach  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # the cores are shared (tests/conftest.py)


def test_tiny_run_compares_fafm_with_raw_flow_at_equal_steps_with_a_curve(tmp_path: Path, shared_data: Path) -> None:
    run_claim("fafm", scale="tiny", seeds=3, out=tmp_path)
    res = json.loads((tmp_path / "fafm.json").read_text())
    steps, _, n_eval, _, every, n_curve = SCALES["tiny"]
    assert res["method_arm"] == "fafm" and res["baseline_arm"] == "flow_raw" and set(res["arms"]) == set(ARMS)
    assert {a["compute"]["train_steps"] for a in res["arms"].values()} == {steps}
    assert all(a["n_items"] == [n_eval] * 3 and all(0 <= v <= 1 for v in a["values"]) for a in res["arms"].values())
    assert res["effect"] == pytest.approx(res["arms"]["fafm"]["mean"] - res["arms"]["flow_raw"]["mean"])
    cond = res["conditions"]["success_rate"]["arms"]
    assert cond["fafm"]["compute"]["train_steps"] == cond["flow_raw"]["compute"]["train_steps"] == steps
    for arm in ARMS:
        points = res["curve"][arm]
        assert [p["step"] for p in points] == list(range(every, steps + 1, every))
        assert all(p["episodes"] == n_curve and p["held_out_loss"] > 0 for p in points)
    hf = res["smoothness"]["high_freq_energy"]
    assert hf["fafm_minus_flow_raw"]["effect"] == pytest.approx(hf["fafm"] - hf["flow_raw"])
    if sum(res["successes"].values()) == 0:
        assert res["verdict"] == "untestable here" and "optimiser steps" in res["needs"]
    else:
        assert res["verdict"] in ("reproduced", "not reproduced")


def test_steps_to_reach_extrapolates_a_log_linear_curve() -> None:
    points = [{"step": s, "coverage": 0.1 * np.log(s) - 0.2} for s in (500, 1000, 2000, 4000)]
    assert steps_to_reach(points, "coverage", 0.1 * np.log(64000) - 0.2) == pytest.approx(64000, rel=1e-6)
    flat = [{"step": s, "coverage": 0.3} for s in (500, 1000)]
    assert steps_to_reach(flat, "coverage", 0.9) is None
    assert steps_to_reach(points[:1], "coverage", 0.9) is None
